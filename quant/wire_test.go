package quant

import (
	"errors"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/internal/field"
)

func TestParseBits(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"32", 32}, {"fp32", 32}, {"FP32", 32}, {"8", 8}, {"int8", 8}, {"4", 4}, {"Int4", 4}, {"2", 2}, {"int2", 2}, {" 2 ", 2},
		{"1", 1}, {"int1", 1}} { // 1: the test-only width (export_test.go)
		if got, err := ParseBits(c.in); err != nil || got != c.want {
			t.Errorf("ParseBits(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "16", "3", "int32", "int", "02", "+2", "2.0", "fp16", "auto", "int-2"} {
		if got, err := ParseBits(in); err == nil {
			t.Errorf("ParseBits(%q) = %d, want an error", in, got)
		}
	}
	if w, err := ParseWire("int4", ParamsBF16); err != nil || w != (Wire{Bits: 4, Params: ParamsBF16}) {
		t.Errorf("ParseWire = %+v, %v", w, err)
	}
}

func TestWidths(t *testing.T) {
	if got := WidthList("|"); got != "32|8|4|2|1" { // 1: the test-only width
		t.Errorf("WidthList = %q", got)
	}
	if got := QuantisedList(","); got != "1,2,4,8" {
		t.Errorf("QuantisedList = %q", got)
	}
}

func TestWireValidateAndName(t *testing.T) {
	for _, c := range []struct {
		w          Wire
		ok         bool
		name, desc string
	}{
		{Wire{Bits: 32}, true, "fp32", "fp32"},
		{Wire{Bits: 32, Params: ParamsBlock}, true, "fp32", "fp32"}, // parameters do not apply
		{Wire{Bits: 8}, true, "int8", "int8 (fp32 params)"},
		{Wire{Bits: 2, Params: ParamsBlock}, true, "int2+block", "int2 (block params)"},
		{Wire{Bits: 4, Params: ParamsBF16}, true, "int4+bf16", "int4 (bf16 params)"},
		{Wire{Bits: 1}, true, "int1", "int1 (fp32 params)"},
		{Wire{Bits: 3}, false, "", ""},
		{Wire{Bits: 0}, false, "", ""},
		{Wire{Bits: 16}, false, "", ""},
		{Wire{Bits: 2, Params: ParamsBlock + 1}, false, "", ""},
	} {
		err := c.w.Validate()
		if (err == nil) != c.ok {
			t.Errorf("%+v: Validate = %v, want ok %v", c.w, err, c.ok)
			continue
		}
		if c.ok && (c.w.Name() != c.name || c.w.String() != c.desc) {
			t.Errorf("%+v: Name %q String %q, want %q %q", c.w, c.w.Name(), c.w.String(), c.name, c.desc)
		}
	}
}

func TestWireSize(t *testing.T) {
	for _, c := range []struct {
		w                 Wire
		rows, width       int
		data, param       int
		rowData, rowParam float64
	}{
		{Wire{Bits: 32}, 10, 17, 680, 0, 68, 0},
		{Wire{Bits: 8}, 10, 17, 170, 80, 17, 8},
		{Wire{Bits: 4, Params: ParamsBF16}, 10, 17, 90, 40, 9, 4},
		{Wire{Bits: 2}, 10, 17, 50, 80, 5, 8},
		{Wire{Bits: 2, Params: ParamsBlock}, BlockRows + 1, 16, 4 * (BlockRows + 1), 3*(BlockRows+1) + 8, 4, 3 + 4.0/BlockRows},
		{Wire{Bits: 1}, 10, 17, 30, 80, 3, 8},
	} {
		d, p := c.w.Size(c.rows, c.width)
		if d != c.data || p != c.param {
			t.Errorf("%s: Size(%d, %d) = %d, %d; want %d, %d", c.w, c.rows, c.width, d, p, c.data, c.param)
		}
		if b := c.w.Bytes(int64(c.rows), c.width); b != int64(d+p) {
			t.Errorf("%s: Bytes = %d, want %d", c.w, b, d+p)
		}
		if rd, rp := c.w.RowBytes(c.width); rd != c.rowData || rp != c.rowParam {
			t.Errorf("%s: RowBytes(%d) = %g, %g; want %g, %g", c.w, c.width, rd, rp, c.rowData, c.rowParam)
		}
	}
}

func TestWiresResolveValidateCodecs(t *testing.T) {
	if got := (Wires{}).Resolve(); got != (Wires{{Bits: 32}, {Bits: 32}, {Bits: 32}, {Bits: 32}}) {
		t.Errorf("Resolve(zero) = %+v", got)
	}
	int2 := Wire{Bits: 2, Params: ParamsBlock}
	ws := Wires{Forward: int2, Eval: {Bits: 8}}.Resolve()
	if ws[Backward] != int2 || ws[Eval] != (Wire{Bits: 8}) || !ws[Intra].Exact() {
		t.Errorf("Resolve = %+v", ws)
	}
	cs, err := ws.NewCodecs("p.Config.Wire", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range []string{"int2+block", "int2+block", "int8", ""} {
		if got := cs[r]; (got == nil) != (want == "") || got != nil && got.Name() != want {
			t.Errorf("codec of %s = %v, want %q", Role(r), got, want)
		}
	}
	if cs[Forward] == cs[Backward] {
		t.Error("two roles share one codec")
	}
	bad := Wires{Forward: int2, Backward: {Bits: 3}}
	for _, err := range []error{bad.Validate("p.Config.Wire"), func() error { _, err := bad.NewCodecs("p.Config.Wire", 1, ""); return err }()} {
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != "p.Config.Wire[backward]" || !strings.Contains(err.Error(), "3 bits, want 32, 8, 4, 2") {
			t.Errorf("error %v, want a field error of p.Config.Wire[backward]", err)
		}
	}
	if _, err := (Wires{Forward: int2}).NewCodecs("p.Config.Wire", 1, "no-such-kernel"); err == nil {
		t.Error("unknown kernel accepted")
	}
}

func TestAutoBits(t *testing.T) {
	if AutoBits(1) != ExactBits || AutoBits(0) != ExactBits || AutoBits(2) != 2 || AutoBits(1024) != 2 {
		t.Errorf("AutoBits: 1 rank %d, 2 ranks %d", AutoBits(1), AutoBits(2))
	}
	if err := (Wire{Bits: AutoBits(4)}).Validate(); err != nil {
		t.Errorf("AutoBits(4) is no width: %v", err)
	}
}
