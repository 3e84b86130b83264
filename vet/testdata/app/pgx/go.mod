// A stand-in for pgx.
module github.com/jackc/pgx/v5

go 1.26.0
