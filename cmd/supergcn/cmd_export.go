package main

import (
	"fmt"
	"os"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/interop"
	"github.com/supergcn/supergcn/train"
)

func init() {
	register("export", "write a saved model's weights under PyG's names and PyTorch's layouts (.safetensors or .npz)", cmdExport)
}

func cmdExport(args []string) error {
	fs := newFlagSet("export", "--model CKPT --out FILE.safetensors|FILE.npz")
	model := fs.String("model", "", "model file written by supergcn train --save")
	out := fs.String("out", "", "output: FILE.safetensors or FILE.npz (format by extension; docs/MODELS.md)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *model == "":
		return usageError("--model: required")
	case *out == "":
		return usageError("--out: required")
	}
	if _, err := interop.FormatOf(*out); err != nil {
		return usageError(fmt.Sprintf("--out: %q: the name must end in .safetensors or .npz", *out))
	}
	if err := container.CheckInput(*model); err != nil {
		return usageError(fmt.Sprintf("--model: %v", err))
	}
	if err := distinctOutputs([]container.NamedPath{{Name: "--model", Path: *model}},
		[]container.NamedPath{{Name: "--out", Path: *out}}); err != nil {
		return err
	}
	if err := container.CheckWritable(*out); err != nil {
		return usageError(fmt.Sprintf("--out: %v", err))
	}
	ck, err := train.LoadCheckpoint(*model)
	if err != nil {
		return err
	}
	m := interop.Model{Config: ck.Model, FeatNorm: ck.FeatNorm, LabelProp: ck.LabelProp, Params: map[string][]float32{}}
	for _, p := range ck.Params {
		m.Params[p.Name] = p.W
	}
	ts, meta, err := interop.Export(m)
	if err != nil {
		return fmt.Errorf("%s: %w", *model, err)
	}
	if ck.DataID != "" {
		meta["data_id"] = ck.DataID
	}
	if err := interop.WriteFile(*out, ts, meta); err != nil {
		return err
	}
	n := 0
	for _, t := range ts {
		n += len(t.Data)
	}
	fmt.Fprintf(os.Stdout, "export: wrote %s (%s, %d layers: %d tensors, %d values)\n", *out, ck.Model.Model, ck.Model.Layers, len(ts), n)
	return nil
}
