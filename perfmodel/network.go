package perfmodel

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Link is a latency–bandwidth link class: a message of b bytes takes
// LatencyUS·1e-6 + b/(GBs·1e9·Efficiency) seconds. For the inter-node class
// GBs is the node's injection bandwidth, shared by the node's ranks (and
// the busiest direction counts); for the intra-node class it is per rank.
type Link struct {
	LatencyUS  float64 `json:"latency_us"`
	GBs        float64 `json:"gbs"`        // nominal bandwidth, 1e9 bytes/s
	Efficiency float64 `json:"efficiency"` // payload fraction of GBs reached (protocol headers, MPI)
}

func (l Link) validate(name string) error {
	if !(l.LatencyUS >= 0 && l.LatencyUS <= 1e7) || !(l.GBs >= minRate && l.GBs <= maxRate) ||
		!(l.Efficiency >= 1e-6 && l.Efficiency <= 1) {
		return fmt.Errorf("%s: latency_us %v, gbs %v, efficiency %v: want latency in [0, 1e7], gbs in [%g, %g], efficiency in (0, 1]",
			name, l.LatencyUS, l.GBs, l.Efficiency, minRate, maxRate)
	}
	return nil
}

// Seconds is the time of msgs messages totalling bytes bytes.
func (l Link) Seconds(msgs int64, bytes float64) float64 {
	return float64(msgs)*l.LatencyUS*1e-6 + bytes/(l.GBs*1e9*l.Efficiency)
}

// Network is the inter-node link class of a cluster (the intra-node class
// comes from the machine Profile). Single is the one-node case: every rank
// on one node, shared memory only.
type Network struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Inter  Link   `json:"inter_node"`
	Single bool   `json:"single_node,omitempty"`
}

// Published figures behind the presets. Latencies are MPI-level
// assumptions above the hardware figure quoted; efficiencies are
// assumptions (large-message MPI payload over the nominal rate).
var presets = map[string]Network{
	"tofu-d": {Name: "tofu-d", Inter: Link{LatencyUS: 1.0, GBs: 40.8, Efficiency: 0.9},
		Source: "Ajima et al., \"The Tofu Interconnect D\", IEEE CLUSTER 2018: 6.8 GB/s per link, 6 TNIs per node = 40.8 GB/s injection, " +
			"0.49 µs put latency; 1 µs MPI latency and 0.9 efficiency assumed"},
	"tofu-d-alltoall": {Name: "tofu-d-alltoall", Inter: Link{LatencyUS: 1.0, GBs: 12, Efficiency: 0.9},
		Source: "Tofu-D under a job-wide all-to-all of a few hundred nodes: 12 GB/s a node, fitted to SuperGCN's (Zhuang et al., SC'24) " +
			"fp32 epoch without its communication methods, 2.163 s at 768 ranks (192 A64FX nodes × 4 CMGs), which this model gives " +
			"(2.14 s, post fp32, papers-shaped graph, docs/LAYOUT.md) at 12 GB/s and not at the injection rate of preset tofu-d (0.82 s). " +
			"The torus bisection agrees: an all-to-all over 192 nodes crosses the middle of the allocation, 9-14 GB/s a node for its " +
			"shapes at 6.8 GB/s a link. 1 µs MPI latency and 0.9 efficiency as tofu-d"},
	"ib-hdr": {Name: "ib-hdr", Inter: Link{LatencyUS: 1.0, GBs: 25, Efficiency: 0.95},
		Source: "InfiniBand HDR, 200 Gb/s per port (NVIDIA ConnectX-6 product brief: 200 Gb/s, sub-600 ns latency); 1 µs MPI latency and 0.95 efficiency assumed, one port per node"},
	"ib-edr": {Name: "ib-edr", Inter: Link{LatencyUS: 1.0, GBs: 12.5, Efficiency: 0.95},
		Source: "InfiniBand EDR, 100 Gb/s per port (NVIDIA ConnectX-5 product brief: 100 Gb/s, sub-600 ns latency); 1 µs MPI latency and 0.95 efficiency assumed, one port per node"},
	"10gbe": {Name: "10gbe", Inter: Link{LatencyUS: 20, GBs: 1.25, Efficiency: 0.94},
		Source: "10 Gigabit Ethernet (IEEE 802.3ae), TCP/IP: 1448 payload bytes per 1538 on the wire at MTU 1500; 20 µs MPI latency over TCP assumed"},
	"25gbe": {Name: "25gbe", Inter: Link{LatencyUS: 10, GBs: 3.125, Efficiency: 0.94},
		Source: "25 Gigabit Ethernet (IEEE 802.3by), TCP/IP at MTU 1500; 10 µs MPI latency assumed"},
	"100gbe": {Name: "100gbe", Inter: Link{LatencyUS: 5, GBs: 12.5, Efficiency: 0.94},
		Source: "100 Gigabit Ethernet (IEEE 802.3ba), TCP/IP at MTU 1500; 5 µs MPI latency assumed"},
	"shm": {Name: "shm", Single: true, Source: "one node: every rank in shared memory (the profile's intra_node link)"},
}

// Presets returns the preset names, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// tbfEfficiency is the TCP payload per byte tc tbf counts on a veth at MTU
// 1500: 1448 payload bytes (TCP timestamps on) per 1514-byte frame.
const tbfEfficiency = 1448.0 / 1514

// tbfLatencyUS is the assumed per-message latency of MPI over TCP on the
// emulation's veth pairs and bridge (no delay is added by the emulation).
const tbfLatencyUS = 30

// ParseNetwork returns a preset (see Presets) or, for a bare rate such as
// "2.5gbit", "10gbit" or "100mbit" (tc's units kbit, mbit, gbit: 1e3, 1e6,
// 1e9 bit/s), the link scripts/emu-cluster.sh emulates: each node's link
// shaped by tc tbf to the rate in both directions, TCP over veth.
func ParseNetwork(s string) (Network, error) {
	if n, ok := presets[strings.ToLower(s)]; ok {
		return n, nil
	}
	low := strings.ToLower(s)
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}} {
		if num, ok := strings.CutSuffix(low, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				break
			}
			// 1 kbit … 1 Pbit: outside, the times overflow or vanish
			bits := v * u.scale
			if !(bits >= 1e3 && bits <= 1e15) {
				return Network{}, fmt.Errorf("rate %q: want a rate from 1kbit to 1000000gbit, such as 2.5gbit", s)
			}
			gbs := bits / 8 / 1e9
			return Network{Name: s, Inter: Link{LatencyUS: tbfLatencyUS, GBs: gbs, Efficiency: tbfEfficiency},
				Source: fmt.Sprintf("emulated link (tc tbf, scripts/emu-cluster.sh): %s per node each way, TCP payload 1448/1514 of the shaped bytes, %d µs latency assumed", s, tbfLatencyUS)}, nil
		}
	}
	return Network{}, fmt.Errorf("unknown network %q (want a preset: %s; or a rate such as 2.5gbit, 100mbit)", s, strings.Join(Presets(), ", "))
}
