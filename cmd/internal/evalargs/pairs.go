// Package evalargs is what eval's flags name beyond parsing: the node
// pairs a link model scores (--pairs) and the scores file (--scores).
package evalargs

import (
	"flag"
	"fmt"
	"io"

	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/train"
)

// Pairs are eval's flags for scoring node pairs with a link model.
type Pairs struct {
	Pairs, Scores string
}

// Register adds --pairs and --scores to fs.
func (p *Pairs) Register(fs *flag.FlagSet) {
	fs.StringVar(&p.Pairs, "pairs", "", "link model: score the node pairs of FILE (.npy (E, 2), .csv[.gz] one \"u,v\" a line, or .npz with edge or source_node/target_node) and write them to --scores")
	fs.StringVar(&p.Scores, "scores", "", "with --pairs: write the decoder's logits (before the sigmoid) to FILE.npy, float32 (E,), in the order of the pairs")
}

// Check checks the pair flags before any data is read: ck is the model
// (file model), edgeSplit and edgeSplitFiles the edge split flags, inputs
// the files the command reads, nodeOutputs whether --predictions or
// --embeddings are asked for.
func (p *Pairs) Check(ck *train.Checkpoint, model, edgeSplit, edgeSplitFiles string, inputs []container.NamedPath, nodeOutputs bool) error {
	usage := func(s string) error { return flagtab.UsageError(s) }
	switch {
	case p.Pairs == "" && p.Scores != "":
		return usage("--scores goes with --pairs")
	case p.Pairs == "":
		return nil
	case p.Scores == "":
		return usage("--pairs: give --scores FILE.npy to write the scores to")
	case nodeOutputs:
		return usage("--pairs: scores pairs only; --predictions and --embeddings score nodes (a node classification model)")
	case ck.Task != "link":
		return usage(fmt.Sprintf("--pairs: %s was trained for task %s: pairs are scored by a link prediction model (train --task link)", model, ck.Task))
	case edgeSplit != "" && edgeSplitFiles != "":
		return usage("--edge-split-files: give the edge split either as files or as --edge-split, not both")
	}
	if err := container.CheckInput(p.Pairs); err != nil {
		return usage(fmt.Sprintf("--pairs: %v", err))
	}
	if err := container.CheckWritable(p.Scores); err != nil {
		return usage(fmt.Sprintf("--scores: %v", err))
	}
	if err := container.CheckDistinct(append(inputs, container.NamedPath{Name: "--pairs", Path: p.Pairs}),
		[]container.NamedPath{{Name: "--scores", Path: p.Scores}}); err != nil {
		return usage(err.Error())
	}
	return nil
}

// Score scores the pairs with model ck on shard s of c's ranks and writes
// the scores (rank 0, with a line to log).
func (p *Pairs) Score(c comm.Comm, s *partition.Shard, ck *train.Checkpoint, threads int, kernel string, log io.Writer) error {
	pairs, err := graph.ReadPairFile(p.Pairs, int(s.NumGlobalNodes))
	if err != nil {
		return fmt.Errorf("--pairs: %w", err)
	}
	scores, err := train.ScorePairs(ck, s, c, threads, kernel, pairs)
	if err != nil || c.Rank() != 0 {
		return err
	}
	if err := graph.WriteNpy(p.Scores, graph.NpyData{Shape: []int{len(scores)}, Data: scores}); err != nil {
		return fmt.Errorf("--scores: %w", err)
	}
	dec := ck.Decoder
	if dec == "" {
		dec = "dot"
	}
	fmt.Fprintf(log, "eval: scored %d pairs of %s with %s (%s decoder) -> %s\n", len(pairs), p.Pairs, ck.Model.Model, dec, p.Scores)
	return nil
}
