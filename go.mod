module github.com/agentvcr/agentvcr

go 1.26

require (
	github.com/brianvoe/gofakeit/v7 v7.18.2
	github.com/jackc/pgx/v5 v5.12.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/tidwall/gjson v1.20.2
	gopkg.in/dnaeon/go-vcr.v3 v3.2.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/elazarl/goproxy v1.9.3 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
	golang.org/x/net v0.50.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)
