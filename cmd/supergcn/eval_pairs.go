package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/train"
)

// pairArgs are eval's flags for scoring node pairs with a link model.
type pairArgs struct {
	pairs, scores string
}

func (p *pairArgs) register(fs *flag.FlagSet, d *dataFlags) {
	fs.StringVar(&p.pairs, "pairs", "", "link model: score the node pairs of FILE (.npy (E, 2), .csv[.gz] one \"u,v\" a line, or .npz with edge or source_node/target_node) and write them to --scores")
	fs.StringVar(&p.scores, "scores", "", "with --pairs: write the decoder's logits (before the sigmoid) to FILE.npy, float32 (E,), in the order of the pairs")
	fs.StringVar(&d.edgeSplit, "edge-split", "", "with --pairs: the --edge-split the model was trained with (its held-out edges removed from the graph again)")
	fs.StringVar(&d.edgeSplitFiles, "edge-split-files", "", "with --pairs: the --edge-split-files the model was trained with (its held-out edges removed from the graph again)")
}

// check checks the pair flags before any data is read (ck: the model).
func (p *pairArgs) check(d *dataFlags, ck *train.Checkpoint, model string) error {
	switch {
	case p.pairs == "" && (p.scores != "" || d.edgeSplit != "" || d.edgeSplitFiles != ""):
		return usageError("--scores, --edge-split and --edge-split-files go with --pairs")
	case p.pairs == "":
		return nil
	case p.scores == "":
		return usageError("--pairs: give --scores FILE.npy to write the scores to")
	case ck.Task != "link":
		return usageError(fmt.Sprintf("--pairs: %s was trained for task %s: pairs are scored by a link prediction model (train --task link)", model, ck.Task))
	case d.edgeSplit != "" && d.edgeSplitFiles != "":
		return usageError("--edge-split-files: give the edge split either as files or as --edge-split, not both")
	}
	if err := container.CheckInput(p.pairs); err != nil {
		return usageError(fmt.Sprintf("--pairs: %v", err))
	}
	if err := container.CheckWritable(p.scores); err != nil {
		return usageError(fmt.Sprintf("--scores: %v", err))
	}
	d.noLabels = true
	return distinctOutputs(append(d.inputPaths(), container.NamedPath{Name: "--pairs", Path: p.pairs}),
		[]container.NamedPath{{Name: "--scores", Path: p.scores}})
}

// run scores the pairs with model ck on w's ranks and writes the scores
// (rank 0).
func (p *pairArgs) run(w *world, d *dataFlags, ck *train.Checkpoint, threads int, kernel string) error {
	c := w.comm
	s, err := d.loadShard(c, w, nil)
	if err != nil {
		return err
	}
	pairs, err := graph.ReadPairFile(p.pairs, int(s.NumGlobalNodes))
	if err != nil {
		return fmt.Errorf("--pairs: %w", err)
	}
	scores, err := train.ScorePairs(ck, s, c, threads, kernel, pairs)
	if err != nil || c.Rank() != 0 {
		return err
	}
	if err := graph.WriteNpy(p.scores, graph.NpyData{Shape: []int{len(scores)}, Data: scores}); err != nil {
		return fmt.Errorf("--scores: %w", err)
	}
	fmt.Fprintf(os.Stdout, "eval: scored %d pairs of %s with %s (%s decoder) -> %s\n", len(pairs), p.pairs, ck.Model.Model, decoderName(ck), p.scores)
	return nil
}

func decoderName(ck *train.Checkpoint) string {
	if ck.Decoder == "" {
		return "dot"
	}
	return ck.Decoder
}
