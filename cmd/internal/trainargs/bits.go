package trainargs

import (
	"fmt"

	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"github.com/supergcn/supergcn/quant"
)

// Bits are the wire-format flags as given (resolved once the rank
// count is known).
type Bits struct {
	Fwd, Bwd, Eval, Intra string // --bits, --bits-backward, --eval-bits, --intra-bits
	Params                quant.Params
}

// Wires resolves the flags for ranks ranks: a role whose flag is unset
// (or --intra-bits auto) takes quant.Wires.Resolve's default.
func (b Bits) Wires(ranks int) (quant.Wires, error) {
	var ws quant.Wires
	for _, f := range []struct {
		role    quant.Role
		flag, v string
	}{{quant.Forward, "--bits", b.Fwd}, {quant.Backward, "--bits-backward", b.Bwd}, {quant.Eval, "--eval-bits", b.Eval}, {quant.Intra, "--intra-bits", b.Intra}} {
		if f.v == "" || (f.role == quant.Intra && f.v == "auto") {
			continue
		}
		bits, err := parseBits(f.flag, f.v, ranks)
		if err != nil {
			return ws, err
		}
		ws[f.role] = quant.Wire{Bits: bits, Params: b.Params}
	}
	return ws.Resolve(), nil
}

// parseBits reads a --bits value (quant.ParseBits); "auto" is
// quant.AutoBits.
func parseBits(flagName, v string, ranks int) (int, error) {
	if v == "auto" {
		return quant.AutoBits(ranks), nil
	}
	b, err := quant.ParseBits(v)
	if err != nil {
		return 0, flagtab.UsageError(fmt.Sprintf("%s: %q is not %s or auto", flagName, v, quant.WidthList(", ")))
	}
	return b, nil
}
