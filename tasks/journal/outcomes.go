package journal

// Outcomes indexes a journal's records by (model, item, repeat): the
// answered record that counts, and the last not-run record in journal
// order.
type Outcomes struct {
	answered map[attempt]Record
	notRun   map[attempt]Record
}

// attempt keys a model's answer to one repeat of an item.
type attempt struct {
	model, item string
	repeat      int
}

// Outcomes picks, for each (model, item, repeat), the answered record that
// counts: the latest-started one when a prompt change re-asked it.
func (st *State) Outcomes() Outcomes {
	o := Outcomes{answered: map[attempt]Record{}, notRun: map[attempt]Record{}}
	for _, rec := range st.Sorted() {
		k := attempt{rec.Model, rec.Item, rec.Repeat}
		if rec.Status != StatusAnswered {
			o.notRun[k] = rec
			continue
		}
		old, ok := o.answered[k]
		if !ok || later(rec, old) {
			o.answered[k] = rec
		}
	}
	return o
}

func later(a, b Record) bool {
	if a.Answer.Timing.Started != b.Answer.Timing.Started {
		return a.Answer.Timing.Started > b.Answer.Timing.Started
	}
	return a.Key > b.Key
}

// Answered returns the answered record of a model's repeat of an item that
// counts, and whether there is one.
func (o Outcomes) Answered(model, item string, repeat int) (Record, bool) {
	rec, ok := o.answered[attempt{model, item, repeat}]
	return rec, ok
}

// NotRun reports whether the journal holds a not-run record of a model's
// repeat of an item.
func (o Outcomes) NotRun(model, item string, repeat int) bool {
	_, ok := o.notRun[attempt{model, item, repeat}]
	return ok
}

// LastNotRun returns the last not-run record of a model's repeat of an item
// in journal order, and whether there is one.
func (o Outcomes) LastNotRun(model, item string, repeat int) (Record, bool) {
	rec, ok := o.notRun[attempt{model, item, repeat}]
	return rec, ok
}
