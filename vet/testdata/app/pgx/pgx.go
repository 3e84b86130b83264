// Package pgx stands in for pgx.
package pgx

import "context"

type Conn struct{}

func Connect(ctx context.Context, url string) (*Conn, error) { return &Conn{}, nil }

func (c *Conn) Exec(ctx context.Context, sql string) error { return nil }
