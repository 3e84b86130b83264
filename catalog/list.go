package catalog

import (
	"cmp"
	"slices"
)

// Listing is a suite as a catalog program's --list shows it (catalogcmd).
type Listing struct {
	ID          string   `json:"id"`
	Label       string   `json:"label"`
	Tier        string   `json:"tier,omitempty"`
	Rank        int      `json:"rank"`
	Size        int      `json:"size"`
	Fingerprint string   `json:"fingerprint"`
	Cells       []string `json:"cells"`
}

// List validates the catalog and lists its suites, by rank, each with
// its fingerprint and its cells' ids.
func (c *Catalog) List() ([]Listing, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var out []Listing
	for i := range c.Suites {
		s := &c.Suites[i]
		fp, err := c.Fingerprint(s)
		if err != nil {
			return nil, err
		}
		l := Listing{ID: s.ID, Label: s.Label, Tier: s.Tier, Rank: s.Rank, Size: s.Size, Fingerprint: fp, Cells: []string{}}
		for _, cl := range s.Cells() {
			l.Cells = append(l.Cells, cl.ID)
		}
		out = append(out, l)
	}
	slices.SortStableFunc(out, func(a, b Listing) int { return cmp.Compare(a.Rank, b.Rank) })
	return out, nil
}
