// A SentencePiece model (tokenizer.model) from its pieces: sentencepiece_model.proto's ModelProto
// in protobuf's wire format, written by hand as sentencepiece.cpp reads it (no protobuf
// dependency for a dozen fields). The pieces {piece, score, type}, a TrainerSpec (model type,
// vocabulary size, byte fallback, the unknown / bos / eos / pad ids and texts, the control and
// user-defined symbols) and a NormalizerSpec: identity, whitespace escaped as U+2581, no removal
// of extra whitespace, the dummy prefix as given - what llama.cpp does with a "llama" vocabulary.
#pragma once

#include <string>
#include <vector>

#include "sentencepiece.hpp"

namespace ckplugin::hf {

struct SentencePieceModel {
    std::vector<Piece> pieces;
    // Piece ids; -1: none (bos, eos, pad). The unknown piece is required.
    int unk_id = 0;
    int bos_id = -1;
    int eos_id = -1;
    int pad_id = -1;
    bool add_dummy_prefix = true;
};

// The model file's bytes. The model type is BPE (docs/decisions/0059-hf-export-tokenizer.md).
std::string sentencepiece_model_bytes(const SentencePieceModel& model);

}  // namespace ckplugin::hf
