#!/bin/sh
# Makes the protobuf test vectors with protoc (Debian's protobuf-compiler), an encoder
# independent of cfdb: descriptor sets of tests/vectors/records/*.proto and the binary
# encoding of each *.txtpb text message.
# Usage: make_pb_vectors.sh PROTOC VECTORS_DIR OUT_DIR [FUZZ_CORPUS_DIR]
set -eu
protoc=$1 src=$2 out=$3
mkdir -p "$out"
"$protoc" -I"$src" --descriptor_set_out="$out/pb_types.pb" --include_imports "$src/pb_types.proto"
"$protoc" -I"$src" --descriptor_set_out="$out/pb_proto3.pb" --include_imports "$src/pb_proto3.proto"
"$protoc" -I"$src" --descriptor_set_out="$out/rl_types.pb" --include_imports "$src/rl_types.proto"
# rl_types.proto alone (no imports): its FileDescriptorProto is a MetaData's records field.
"$protoc" -I"$src" --descriptor_set_out="$out/rl_types_only.pb" "$src/rl_types.proto"
"$protoc" -I"$src" --descriptor_set_out="$out/rl_union2_only.pb" "$src/rl_union2.proto"
# Record types declared with the Record Layer's options: needs cfdb's option messages
# (src/layers/records) and google/protobuf/descriptor.proto (libprotobuf-dev).
schema="$src/../../../src/layers/records"
"$protoc" -I"$schema" -I"$src" --descriptor_set_out="$out/rl_options.pb" --include_imports \
    "$src/rl_options.proto"
for f in rl_evolve1 rl_evolve2 rl_bad_sum rl_bad_count rl_deep; do
    "$protoc" -I"$schema" -I"$src" --descriptor_set_out="$out/$f.pb" --include_imports "$src/$f.proto"
done
enc() { "$protoc" -I"$src" --encode="$1" "$2" < "$src/$3.txtpb" > "$out/$3.bin"; }
enc cfdb.test.Scalars pb_types.proto scalars
enc cfdb.test.Repeats pb_types.proto repeats
enc cfdb.test.WithOneof pb_types.proto oneof
enc cfdb.test.Grouped pb_types.proto grouped
enc cfdb.test3.P3 pb_proto3.proto p3
enc cfdb.rl.Person rl_types.proto person

# With a fourth argument, a seed corpus for fuzz/fuzz_protobuf.c: a selector byte (0: a
# descriptor set; k: message type k-1 in file order, pb_types.proto then pb_proto3.proto)
# followed by the bytes.
if [ $# -ge 4 ]; then
    corpus=$4
    mkdir -p "$corpus"
    seed() { { printf "\\$(printf '%03o' "$1")"; cat "$out/$2"; } > "$corpus/$2.seed"; }
    seed 0 pb_types.pb
    seed 0 pb_proto3.pb
    seed 1 scalars.bin
    seed 5 repeats.bin
    seed 6 oneof.bin
    seed 8 grouped.bin
    seed 10 p3.bin
fi
