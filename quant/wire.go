package quant

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/internal/field"
)

// ExactBits is the width of rows that travel as float32, as they are: no
// codec encodes or decodes them.
const ExactBits = 32

// AutoBits is the forward width training picks by default for ranks
// ranks: 2 bits when there are several, exact (no codec) alone.
func AutoBits(ranks int) int {
	if ranks > 1 {
		return 2
	}
	return ExactBits
}

// quantBits are the quantised widths, widest first: the one list of them
// (Format.Validate, ParseBits, Widths and every caller's help text read
// it). A width must divide 8 (whole values to a byte); the generic
// kernels serve every such width, a SIMD set the widths it lists.
var quantBits = []int{8, 4, 2}

// Widths returns the widths a Wire may have, ExactBits first, then the
// quantised ones, widest first.
func Widths() []int { return append([]int{ExactBits}, quantBits...) }

// QuantisedWidths returns the quantised widths, narrowest first.
func QuantisedWidths() []int {
	b := slices.Clone(quantBits)
	slices.Sort(b)
	return b
}

// QuantisedList is QuantisedWidths joined by sep ("2, 4, 8" with ", ").
func QuantisedList(sep string) string { return joinInts(QuantisedWidths(), sep) }

// WidthList is Widths joined by sep ("32|8|4|2" with "|").
func WidthList(sep string) string { return joinInts(Widths(), sep) }

func joinInts(a []int, sep string) string {
	s := make([]string, len(a))
	for i, b := range a {
		s[i] = strconv.Itoa(b)
	}
	return strings.Join(s, sep)
}

// quantised reports whether bits is one of the quantised widths.
func quantised(bits int) bool {
	for _, b := range quantBits {
		if b == bits {
			return true
		}
	}
	return false
}

// ParseBits reads a width: its number ("32", "2") or its name ("fp32",
// "int2"), any case.
func ParseBits(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "fp32" {
		return ExactBits, nil
	}
	n, named := strings.CutPrefix(t, "int")
	if b, err := strconv.Atoi(n); err == nil && n == strconv.Itoa(b) && (quantised(b) || b == ExactBits && !named) {
		return b, nil
	}
	return 0, fmt.Errorf("quant: %q is not a width (%s; or fp32, int%d …)", s, WidthList(", "), quantBits[len(quantBits)-1])
}

// Wire is how one role's boundary rows travel: as float32 (Bits
// ExactBits, no codec), or quantised to Bits bits a value with the
// per-row parameters laid out as Params. The zero Wire is unset (see
// Wires.Resolve).
type Wire struct {
	Bits   int
	Params Params
}

// ParseWire reads a width (ParseBits) into a Wire with parameter layout
// params.
func ParseWire(s string, params Params) (Wire, error) {
	b, err := ParseBits(s)
	return Wire{Bits: b, Params: params}, err
}

// Exact reports whether rows travel as float32 without a codec.
func (w Wire) Exact() bool { return w.Bits == ExactBits }

// Validate checks the width and, for a quantised width, the layout.
func (w Wire) Validate() error {
	switch {
	case w.Exact():
		return nil
	case !quantised(w.Bits):
		return fmt.Errorf("%d bits, want %s", w.Bits, WidthList(", "))
	}
	return w.format().Validate()
}

func (w Wire) format() Format { return Format{Bits: w.Bits, Params: w.Params} }

// Size returns the data and parameter bytes of one message of rows×width
// values (ParamsBlock's per-block bases count per message).
func (w Wire) Size(rows, width int) (data, param int) {
	if w.Exact() {
		return 4 * rows * width, 0
	}
	return w.format().Size(rows, width)
}

// Bytes is Size's total, data + param bytes of rows×width values.
func (w Wire) Bytes(rows int64, width int) int64 {
	if w.Exact() {
		return 4 * rows * int64(width)
	}
	d, p := w.format().Size(int(rows), width)
	return int64(d) + int64(p)
}

// RowBytes returns the data and parameter bytes of one row of width
// values, averaged over a block of BlockRows rows.
func (w Wire) RowBytes(width int) (data, param float64) {
	d, p := w.Size(BlockRows, width)
	return float64(d) / BlockRows, float64(p) / BlockRows
}

// Name identifies the format as a codec does: "fp32", "int2",
// "int2+bf16", "int2+block".
func (w Wire) Name() string {
	switch {
	case w.Exact():
		return "fp32"
	case w.Params != ParamsF32:
		return fmt.Sprintf("int%d+%s", w.Bits, w.Params)
	}
	return fmt.Sprintf("int%d", w.Bits)
}

// String names the format for tables: "fp32", "int2 (block params)".
func (w Wire) String() string {
	if w.Exact() {
		return "fp32"
	}
	return fmt.Sprintf("int%d (%s params)", w.Bits, w.Params)
}

// NewCodec returns the codec of w using up to threads goroutines and the
// kernel set kernel ("" or "auto": the best), or nil for an exact w:
// float32 rows need none.
func (w Wire) NewCodec(threads int, kernel string) (*Codec, error) {
	if w.Exact() {
		return nil, nil
	}
	return NewCodec(w.format(), threads, kernel)
}

// Role is one use of a wire format in the boundary exchange.
type Role int

const (
	Forward  Role = iota // rows of training forward passes
	Backward             // gradients sent back in training backward passes
	Eval                 // rows of evaluation passes
	Intra                // rows between ranks of one node, every pass
	NumRoles
)

var roleNames = [NumRoles]string{"forward", "backward", "eval", "intra"}

// String names the role ("forward", "backward", "eval", "intra").
func (r Role) String() string {
	if r >= 0 && r < NumRoles {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Wires is one wire format per role. An unset (zero) Wire takes its
// default in Resolve.
type Wires [NumRoles]Wire

// Resolve returns ws with the defaults filled in: Forward and Intra
// float32, Backward and Eval as Forward.
func (ws Wires) Resolve() Wires {
	for _, r := range []Role{Forward, Intra} {
		if ws[r].Bits == 0 {
			ws[r] = Wire{Bits: ExactBits, Params: ws[r].Params}
		}
	}
	for _, r := range []Role{Backward, Eval} {
		if ws[r].Bits == 0 {
			ws[r] = ws[Forward]
		}
	}
	return ws
}

// IntraFor is the wire of the rows between ranks of one node in a pass
// whose role's wire is w: ws[Intra], except that a float32 pass stays
// float32 throughout (the exchange's rule).
func (ws Wires) IntraFor(w Wire) Wire {
	if w.Exact() {
		return w
	}
	return ws[Intra]
}

// Validate checks every role's Wire (unset ones pass); an error is a
// *field.Error of field name[role] (name: the caller's, e.g.
// "train.Config.Wire").
func (ws Wires) Validate(name string) error {
	for r, w := range ws {
		if w.Bits == 0 {
			continue
		}
		if err := w.Validate(); err != nil {
			return field.Wrap(name+"["+Role(r).String()+"]", err)
		}
	}
	return nil
}

// NewCodecs returns the codec of every role of the resolved ws (nil for
// float32 rows), each its own, so that each counts its own non-finite values.
// Errors name name[role] as Validate's do.
func (ws Wires) NewCodecs(name string, threads int, kernel string) ([NumRoles]*Codec, error) {
	var cs [NumRoles]*Codec
	ws = ws.Resolve()
	if err := ws.Validate(name); err != nil {
		return cs, err
	}
	for r, w := range ws {
		c, err := w.NewCodec(threads, kernel)
		if err != nil {
			return cs, field.Wrap(name+"["+Role(r).String()+"]", err)
		}
		cs[r] = c
	}
	return cs, nil
}
