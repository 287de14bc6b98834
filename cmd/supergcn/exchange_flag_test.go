package main

import (
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"maps"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/exchange"
)

// --exchange accepts what the pattern table names: auto, every pattern and
// its aliases.
func TestExchangeFlagFollowsPatternTable(t *testing.T) {
	if got, want := flagtab.ExchangeEnum.Names(), append([]string{"auto"}, exchange.Exchanges()...); !slices.Equal(got, want) {
		t.Errorf("--exchange names %v, the pattern table %v", got, want)
	}
	if got, want := flagtab.ExchangeEnum.Aliases, exchange.ExchangeAliases(); !maps.Equal(got, want) {
		t.Errorf("--exchange aliases %v, the pattern table %v", got, want)
	}
}
