package main

import (
	"maps"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/exchange"
)

// --exchange accepts what the pattern table names: auto, every pattern and
// its aliases.
func TestExchangeFlagFollowsPatternTable(t *testing.T) {
	if got, want := exchangeEnum.names(), append([]string{"auto"}, exchange.Exchanges()...); !slices.Equal(got, want) {
		t.Errorf("--exchange names %v, the pattern table %v", got, want)
	}
	if got, want := exchangeEnum.aliases, exchange.ExchangeAliases(); !maps.Equal(got, want) {
		t.Errorf("--exchange aliases %v, the pattern table %v", got, want)
	}
}
