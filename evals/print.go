package evals

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteText writes the report for a person: the attempts a dry run
// would make, or each run's summary and each variant's comparison with
// the baseline. (A script reads the Report as JSON.)
func (rep *Report) WriteText(w io.Writer) {
	if rep.DryRun {
		fmt.Fprintf(w, "dry run: %d attempts would run; nothing was started, called or written\n", len(rep.Planned))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "EVAL\tVARIANT\tCASE\tREP\tFROM")
		for _, p := range rep.Planned {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", p.Eval, p.Variant, p.Case, p.Rep, p.Source)
		}
		tw.Flush()
		return
	}
	for _, s := range rep.Runs {
		fmt.Fprintf(w, "%s / %s: %d cases × %d reps: %d of %d attempts ran, %d scored", s.Eval, s.Variant, s.Cases, s.Reps, s.Started, s.Attempts, s.Scored)
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(s.Excluded)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, s.Excluded[k]))
		}
		if s.Unfinished > 0 {
			parts = append(parts, fmt.Sprintf("scored in an unfinished repetition %d", s.Unfinished))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "; kept out of the means: %s", strings.Join(parts, ", "))
		}
		if s.Partial {
			fmt.Fprint(w, "; no repetition ran every case: the means are over the cases that ran")
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  METRIC\tKIND\tMEAN\t95% CI\tN")
		for _, m := range s.Metrics {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\n", m.ID, m.Kind, optNum(m.Mean), interval(m.CI95, s.Reps), m.N)
		}
		tw.Flush()
		fmt.Fprintf(w, "  cost: %s\n", costLine(s.Cost))
		if s.JudgeSharesProvider {
			fmt.Fprintf(w, "  the judge (%s) is of a provider the agent used too: it may be lenient with its own\n", strings.Join(s.JudgeModels, ", "))
		}
		if s.Dir != "" {
			fmt.Fprintf(w, "  results: %s\n", s.Dir)
		}
	}
	for _, c := range rep.Comparisons {
		fmt.Fprintf(w, "%s / %s against the baseline:\n", c.Eval, c.Variant)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  METRIC\tBASELINE\tVARIANT\tDIFF\t95% CI")
		for _, m := range c.Metrics {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", m.ID, optNum(m.Baseline), optNum(m.Variant), signed(m.Diff), interval(m.CI95, 0))
		}
		tw.Flush()
		fmt.Fprintf(w, "  cost: baseline %s, %s %s\n", usd(c.BaselineUSD), c.Variant, usd(c.VariantUSD))
	}
	switch {
	case rep.CostUSD != nil:
		fmt.Fprintf(w, "total cost: %s", money(*rep.CostUSD))
	default:
		fmt.Fprintf(w, "total cost: unknown (%d requests of unknown cost%s)", rep.UnknownRequests, others(rep.PricedCostUSD > 0, "cost ", rep.PricedCostUSD))
	}
	if c := rep.Ceiling; c != nil {
		ceiling := money(c.MaxUSD)
		if c.ShareOfUSD > 0 {
			ceiling += " (this shard's share of the run's " + money(c.ShareOfUSD) + ")"
		}
		switch {
		case c.CannotHold != "":
			fmt.Fprintf(w, "; ceiling %s could not hold: %s", ceiling, c.CannotHold)
		case c.Reached && c.Held:
			fmt.Fprintf(w, "; ceiling %s reached, and held: no attempt started after it", ceiling)
		case c.Reached:
			fmt.Fprintf(w, "; ceiling %s reached, and passed: no attempt started after it, those running finished", ceiling)
		default:
			fmt.Fprintf(w, "; ceiling %s not reached", ceiling)
		}
		if c.FailedUnknown > 0 {
			fmt.Fprintf(w, " (%d failed requests reported no usage: their cost is not in it)", c.FailedUnknown)
		}
	}
	fmt.Fprintln(w)
	switch {
	case rep.Shard != nil:
		fmt.Fprintf(w, "shard %d/%d of run %s: merge every shard's results with --merge\n", rep.Shard.Index, rep.Shard.Of, rep.Shard.Run)
	case rep.Shards > 0:
		fmt.Fprintf(w, "merged from %d shards\n", rep.Shards)
	}
	if rep.Stopped != "" {
		fmt.Fprintf(w, "stopped: %s\n", rep.Stopped)
	}
}

func costLine(c Cost) string {
	var b strings.Builder
	if c.AgentUSD != nil {
		fmt.Fprintf(&b, "agent %s", money(*c.AgentUSD))
	} else {
		fmt.Fprintf(&b, "agent unknown (%d requests: %s%s)", c.UnpricedRequests, strings.Join(c.Unpriced, "; "), others(c.ModelRequests > c.UnpricedRequests, "", c.PricedAgentUSD))
	}
	fmt.Fprintf(&b, "; %d model requests, %d tokens in (%d cached), %d out", c.ModelRequests, c.Tokens.Input, c.Tokens.CacheRead, c.Tokens.Output)
	if c.Judged {
		judge := "unknown"
		if c.JudgeUSD != nil {
			judge = money(*c.JudgeUSD)
		}
		fmt.Fprintf(&b, "; the judge apart: %s, %d requests, %d tokens in, %d out", judge, c.JudgeRequests, c.JudgeTokens.Input, c.JudgeTokens.Output)
	}
	return b.String()
}

func optNum(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *v)
}

func signed(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%+.3f", *v)
}

func usd(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", *v)
}

// interval writes a 95% interval, or why there is none.
func interval(ci *[2]float64, reps int) string {
	if ci == nil {
		if reps == 1 {
			return "- (needs --reps 2+)"
		}
		return "-"
	}
	return fmt.Sprintf("[%.3f, %.3f]", ci[0], ci[1])
}

// others is what the priced requests cost, when there are any besides
// the unknown ones: "the others $0.0000" would say there were.
func others(some bool, verb string, usd float64) string {
	if !some {
		return ""
	}
	return "; the others " + verb + money(usd)
}
