/* Configuration database transaction messages (src/wire/config_messages.h), from
 * FoundationDB 7.3.77 fdbclient/include/fdbclient/ConfigTransactionInterface.h and
 * ConfigKnobs.h (serialize() member lists, file identifiers):
 *   ConfigGeneration            table {committedVersion, liveVersion} (no file identifier)
 *   KnobValueRef (9297109)      table {variant<int, double, int64_t, bool, ValueRef>}
 *   ConfigKeyRef (5918726)      {configClass: Optional<KeyRef>, knobName}
 *   ConfigMutationRef (7219528) {key, value: Optional<KnobValueRef>}
 *   ConfigCommitAnnotationRef   {timestamp: double, description}
 *   ConfigTransactionGetGenerationRequest (138941) {coordinatorsHash, lastSeenLiveVersion, reply}
 *     -> ConfigTransactionGetGenerationReply (2934851) {generation}
 *   ConfigTransactionGetRequest (923040) {coordinatorsHash, generation, key, reply}
 *     -> ConfigTransactionGetReply (2034110) {value: Optional<KnobValue>}
 *   ConfigTransactionCommitRequest (103841) {coordinatorsHash, generation, mutations,
 *     annotation, reply} (the arena is no field) -> Void
 *   ConfigTransactionGetConfigClassesRequest (7163400) {coordinatorsHash, generation}
 *     -> ConfigTransactionGetConfigClassesReply (5309618) {configClasses}
 *   ConfigTransactionGetKnobsRequest (987410) {coordinatorsHash, generation, configClass, reply}
 *     -> ConfigTransactionGetKnobsReply (4109852) {knobNames}
 * Replies travel as ErrorOr<EnsureTable<reply>> (file id with 2 << 24). */
#include "config_messages.h"
#include "msg_types.h"

FB_TABLE_DEF(config_generation, "ConfigGeneration", cfdb_config_generation,
             FB_FIELD(cfdb_config_generation, committedVersion, fb_i64),
             FB_FIELD(cfdb_config_generation, liveVersion, fb_i64));

FB_UNION_DEF(knob_variant, "KnobValueRef.value", cfdb_knob_value, { &fb_i32, offsetof(cfdb_knob_value, i) },
             { &fb_f64, offsetof(cfdb_knob_value, d) }, { &fb_i64, offsetof(cfdb_knob_value, l) },
             { &fb_bool, offsetof(cfdb_knob_value, b) }, { &fb_bytes, offsetof(cfdb_knob_value, s) });
static const fb_field knob_value_fields[] = { { "value", &knob_variant, 0 } };
static fb_type knob_value = { .name = "KnobValueRef", .kind = FB_TABLE, .csize = sizeof(cfdb_knob_value),
                              .fields = knob_value_fields, .nfields = 1 };
FB_OPTIONAL_DEF(opt_knob_value, "Optional<KnobValueRef>", cfdb_opt_knob_value, knob_value);

FB_TABLE_DEF(config_key, "ConfigKeyRef", cfdb_config_key, FB_FIELD(cfdb_config_key, configClass, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_config_key, knobName, fb_bytes));
FB_TABLE_DEF(config_mutation, "ConfigMutationRef", cfdb_config_mutation,
             FB_FIELD(cfdb_config_mutation, key, config_key), FB_FIELD(cfdb_config_mutation, value, opt_knob_value));
FB_VECTOR_DEF(config_mutation_vec, "vector<ConfigMutationRef>", config_mutation);
FB_TABLE_DEF(config_annotation, "ConfigCommitAnnotationRef", cfdb_config_annotation,
             FB_FIELD(cfdb_config_annotation, timestamp, fb_f64),
             FB_FIELD(cfdb_config_annotation, description, fb_bytes));

FB_TABLE_DEF(get_generation_request, "ConfigTransactionGetGenerationRequest", cfdb_config_get_generation_request,
             FB_FIELD(cfdb_config_get_generation_request, coordinatorsHash, fb_u64),
             FB_FIELD(cfdb_config_get_generation_request, lastSeenLiveVersion, cfdb_fb_opt_i64),
             FB_FIELD(cfdb_config_get_generation_request, reply, cfdb_fb_reply_promise));
const fb_message cfdb_msg_config_get_generation_request = { "ConfigTransactionGetGenerationRequest", 138941,
                                                            FB_MSG_REQUEST, &get_generation_request };
FB_TABLE_DEF(get_generation_reply, "ConfigTransactionGetGenerationReply", cfdb_config_get_generation_reply,
             FB_FIELD(cfdb_config_get_generation_reply, generation, config_generation));
const fb_message cfdb_msg_config_get_generation_reply = { "ErrorOr<ConfigTransactionGetGenerationReply>",
                                                          CFDB_REPLY_FILE_ID(2934851), FB_MSG_REPLY,
                                                          &get_generation_reply };

FB_TABLE_DEF(get_request, "ConfigTransactionGetRequest", cfdb_config_get_request,
             FB_FIELD(cfdb_config_get_request, coordinatorsHash, fb_u64),
             FB_FIELD(cfdb_config_get_request, generation, config_generation),
             FB_FIELD(cfdb_config_get_request, key, config_key),
             FB_FIELD(cfdb_config_get_request, reply, cfdb_fb_reply_promise));
const fb_message cfdb_msg_config_get_request = { "ConfigTransactionGetRequest", 923040, FB_MSG_REQUEST,
                                                 &get_request };
FB_TABLE_DEF(get_reply, "ConfigTransactionGetReply", cfdb_config_get_reply,
             FB_FIELD(cfdb_config_get_reply, value, opt_knob_value));
const fb_message cfdb_msg_config_get_reply = { "ErrorOr<ConfigTransactionGetReply>", CFDB_REPLY_FILE_ID(2034110),
                                               FB_MSG_REPLY, &get_reply };

FB_TABLE_DEF(commit_request, "ConfigTransactionCommitRequest", cfdb_config_commit_request,
             FB_FIELD(cfdb_config_commit_request, coordinatorsHash, fb_u64),
             FB_FIELD(cfdb_config_commit_request, generation, config_generation),
             FB_FIELD(cfdb_config_commit_request, mutations, config_mutation_vec),
             FB_FIELD(cfdb_config_commit_request, annotation, config_annotation),
             FB_FIELD(cfdb_config_commit_request, reply, cfdb_fb_reply_promise));
const fb_message cfdb_msg_config_commit_request = { "ConfigTransactionCommitRequest", 103841, FB_MSG_REQUEST,
                                                    &commit_request };

FB_TABLE_DEF(get_classes_request, "ConfigTransactionGetConfigClassesRequest", cfdb_config_get_classes_request,
             FB_FIELD(cfdb_config_get_classes_request, coordinatorsHash, fb_u64),
             FB_FIELD(cfdb_config_get_classes_request, generation, config_generation));
const fb_message cfdb_msg_config_get_classes_request = { "ConfigTransactionGetConfigClassesRequest", 7163400,
                                                         FB_MSG_REQUEST, &get_classes_request };
FB_TABLE_DEF(get_classes_reply, "ConfigTransactionGetConfigClassesReply", cfdb_config_get_classes_reply,
             FB_FIELD(cfdb_config_get_classes_reply, configClasses, cfdb_fb_bytes_vec));
const fb_message cfdb_msg_config_get_classes_reply = { "ErrorOr<ConfigTransactionGetConfigClassesReply>",
                                                       CFDB_REPLY_FILE_ID(5309618), FB_MSG_REPLY,
                                                       &get_classes_reply };

FB_TABLE_DEF(get_knobs_request, "ConfigTransactionGetKnobsRequest", cfdb_config_get_knobs_request,
             FB_FIELD(cfdb_config_get_knobs_request, coordinatorsHash, fb_u64),
             FB_FIELD(cfdb_config_get_knobs_request, generation, config_generation),
             FB_FIELD(cfdb_config_get_knobs_request, configClass, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_config_get_knobs_request, reply, cfdb_fb_reply_promise));
const fb_message cfdb_msg_config_get_knobs_request = { "ConfigTransactionGetKnobsRequest", 987410, FB_MSG_REQUEST,
                                                       &get_knobs_request };
FB_TABLE_DEF(get_knobs_reply, "ConfigTransactionGetKnobsReply", cfdb_config_get_knobs_reply,
             FB_FIELD(cfdb_config_get_knobs_reply, knobNames, cfdb_fb_bytes_vec));
const fb_message cfdb_msg_config_get_knobs_reply = { "ErrorOr<ConfigTransactionGetKnobsReply>",
                                                     CFDB_REPLY_FILE_ID(4109852), FB_MSG_REPLY, &get_knobs_reply };

/* libstdc++ _Hash_bytes (64-bit size_t): MurmurHash2-derived, seed 0xc70f6907. */
static uint64_t shift_mix(uint64_t v)
{
    return v ^ (v >> 47);
}

uint64_t cfdb_std_string_hash(const void *p, size_t len)
{
    const uint64_t mul = (UINT64_C(0xc6a4a793) << 32) + UINT64_C(0x5bd1e995);
    const uint8_t *b = p;
    size_t aligned = len & ~(size_t)7;
    uint64_t h = UINT64_C(0xc70f6907) ^ ((uint64_t)len * mul);
    for (size_t i = 0; i < aligned; i += 8) {
        uint64_t d = 0;
        for (int k = 7; k >= 0; k--)
            d = (d << 8) | b[i + (size_t)k];
        h ^= shift_mix(d * mul) * mul;
        h *= mul;
    }
    if (len & 7) {
        uint64_t d = 0;
        for (size_t k = len & 7; k-- > 0;)
            d = (d << 8) | b[aligned + k];
        h ^= d;
        h *= mul;
    }
    h = shift_mix(h) * mul;
    return shift_mix(h);
}
