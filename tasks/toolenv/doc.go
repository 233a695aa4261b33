// Package toolenv owns CliniCARE's governed tool environment: typed clinical tools over the records (tasks/ehr),
// policy tools over the corpus (tasks/clinicare/policy), the patient scope of a session, and the call log the
// server itself writes, one record per call. Tools are pure functions of (records digest, tool, arguments): they
// read no clock, draw no random number and iterate no map unsorted, so a replay reproduces every result byte for
// byte. The only clock value is each call's latency, kept in the log record and out of every digest.
//
// The package serves the tools over MCP (the official Go SDK) on stdio and on Streamable HTTP. It knows no
// scenario, verdict, agent or score, and never reads the planted truth.
package toolenv
