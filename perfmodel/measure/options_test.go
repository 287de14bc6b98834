package measure

import (
	"errors"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/perfmodel"
)

func goodOptions() Options {
	return Options{Name: "box", Cores: 4, Sizes: Sizes{Spec: "products", Nodes: 1000, Rows: 64, Reps: 1, Peers: 3, HaloFan: 2}}
}

// TestOptionsCheck: Check completes the defaults and names the field of
// each bad setting.
func TestOptionsCheck(t *testing.T) {
	o := goodOptions()
	if err := o.Check(4); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Threads, []int{1, 2, 4}) || !(o.Sizes.Degree > 0) {
		t.Fatalf("defaults: threads %v, degree %g", o.Threads, o.Sizes.Degree)
	}
	for _, c := range []struct {
		field string
		edit  func(*Options)
	}{
		{"measure.Options.Cores", func(o *Options) { o.Cores = 8 }},
		{"measure.Sizes.Peers", func(o *Options) { o.Sizes.Peers = 0 }},
		{"measure.Sizes.ExchangeRows", func(o *Options) { o.Sizes.ExchangeRows = 2 }},
		{"measure.Sizes.ExchangeRows", func(o *Options) { o.Sizes.ExchangeRows = -2 }},
		{"measure.Sizes.Degree", func(o *Options) { o.Sizes.Degree = 5000 }},
		{"measure.Options.HostNodes", func(o *Options) { o.HostNodes = -1 }},
		{"measure.Options.HostNodes", func(o *Options) { o.HostNodes = 10 }},
		{"measure.Options.Threads", func(o *Options) { o.Threads = []int{5} }},
		{"measure.Options.Loads", func(o *Options) { o.Loads = []int{0} }},
		{"measure.Sizes.Spec", func(o *Options) { o.Sizes.Spec = "nosuchpreset" }},
	} {
		o := goodOptions()
		c.edit(&o)
		var fe *field.Error
		if err := o.Check(4); !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: error %v, want one naming it", c.field, err)
		}
	}
	o = goodOptions()
	if err := o.CheckAdd(&perfmodel.Profile{Name: "p", CoresPerNode: 2}); err == nil {
		t.Error("a profile of another core count accepted")
	}
}

func TestParseCounts(t *testing.T) {
	if v, err := ParseCounts("4, 1,2"); err != nil || !slices.Equal(v, []int{1, 2, 4}) {
		t.Fatalf("%v %v", v, err)
	}
	for _, s := range []string{"", "1,,2", "x"} {
		if _, err := ParseCounts(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
