// Stand-ins for agentvcr's packages: only their import paths and names
// matter to the vet.
module github.com/agentvcr/agentvcr

go 1.26.0
