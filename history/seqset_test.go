package history

import (
	"math/rand/v2"
	"testing"
)

func TestSeqSetFindsDuplicatesInAnyOrder(t *testing.T) {
	orders := [][]int64{
		{0, 1, 2, 3}, {0, 0}, {3, 1, 2, 1}, {1, 5, 3, 5}, {1, 5, 3, 7, 3}, {1, 5, 3, 7, 1}, {2, 1, 9, 9}, {-1, 0, -1},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		order := make([]int64, rng.IntN(30))
		for i := range order {
			order[i] = int64(i) + rng.Int64N(4) - 2
		}
		orders = append(orders, order)
	}
	for _, order := range orders {
		var s seqSet
		seen := map[int64]bool{}
		for i, seq := range order {
			if got, want := s.add(seq), !seen[seq]; got != want {
				t.Fatalf("seqs %v: add(%d) at %d = %v, want %v", order, seq, i, got, want)
			}
			seen[seq] = true
		}
	}
}
