package clinicare

// scope is the encounter a case is anchored to.
type scope struct{ subject, hadm, stay string }

// planCount asks for n cases of one plan.
type planCount struct {
	Plan
	n int
}

// scenarioGen plans and writes the cases of one scenario.
type scenarioGen struct {
	id    string
	plans []planCount
	write func(p *patient, plan Plan) scope
}
