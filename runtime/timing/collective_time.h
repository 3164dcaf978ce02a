// The time of one collective over a slice's ICI, from bytes over links at
// the chip's published per-link bandwidth and hops at its hop latency; no
// other factor. The model is the one of "How to Scale Your Model"
// (jax-ml/scaling-book, sharding chapter):
//
//  - all-gather over one axis of n chips: a bidirectional ring when the axis
//    wraps around and the group spans it, each link carrying (n-1)/2 shards
//    each way in ceil((n-1)/2) hops; otherwise a line, whose end links carry
//    n-1 shards in n-1 hops ("we have to do 3 hops for data from the edges
//    to reach the other edge"). reduce-scatter is its mirror image with the
//    output shard; all-reduce is a reduce-scatter then an all-gather.
//  - a group spanning several axes goes axis by axis, its data split into
//    one part per axis, the parts taking the axes in rotated orders so that
//    every axis's links work at once (the book's "n_axes" times the
//    bandwidth).
//  - all-to-all sends each other member 1/n of its input along shortest
//    routes: a link carries the chunks of every pair whose route crosses it
//    (on a bidirectional ring a quarter of an all-gather's bytes; on a line
//    the middle links, the bisection, limit it).
//  - collective-permute routes each pair's operand and counts the hops of
//    the longest route; pairs sharing links share their bandwidth.
//  - groups that are not whole sub-grids of the slice (strided or scattered
//    devices) run a ring in the order the group lists them, every hop
//    routed; groups sharing links share their bandwidth.
// Time = busiest link's bytes / per-link bandwidth + hops x hop latency
// (the book's T_hop = T_min + bytes / W, summed over the hops in sequence).
//
// Pure functions; thread-safe. Errors name the instruction.
#pragma once

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"
#include "runtime/timing/collective_groups.h"
#include "runtime/timing/device_profile.h"

namespace kiln::runtime::timing {

// True for the ops TimeCollective prices: all-gather, all-reduce,
// reduce-scatter, all-to-all, ragged-all-to-all, collective-permute,
// collective-broadcast and the -start of the async pairs. The -done halves
// move nothing of their own.
bool IsTimedCollective(hlo::Opcode op);

// `collective`'s time on `topology` of `chip`s. A collective whose groups
// all have one participant moves nothing over ICI (zero time).
Result<CollectiveTime> TimeCollective(const hlo::Instruction& collective, const Topology& topology,
                                      const ChipSpec& chip, const SliceAssignment& assignment = {});

}  // namespace kiln::runtime::timing
