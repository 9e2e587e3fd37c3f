/* The configuration database's transaction messages (FoundationDB 7.3.77
 * fdbclient/include/fdbclient/ConfigTransactionInterface.h and ConfigKnobs.h), described in
 * src/wire/msg_config.c, answered by cfdb-server's ConfigNode (src/server/config_node.c) and
 * sent by the client's configuration transactions (src/client/config_txn.c).
 *
 * Every coordinator serves ConfigTransactionInterface at well-known tokens
 * (ConfigTransactionInterface(NetworkAddress) in fdbclient/ConfigTransactionInterface.cpp,
 * numbers from fdbrpc/include/fdbrpc/WellKnownEndpoints.h): getGeneration 13, get 14,
 * getClasses 15, getKnobs 16, commit 17.
 *
 * A configuration key is (Optional configClass, knobName); its client-side form is the tuple
 * (configClass or null, knobName). A knob value is the variant<int, double, int64_t, bool,
 * ValueRef> of KnobValueRef, tags 1..5 in that order. The coordinators hash every request
 * carries is std::hash<std::string> of the connection string's toString(). */
#ifndef CFDB_CONFIG_MESSAGES_H
#define CFDB_CONFIG_MESSAGES_H

#include "messages.h"

enum {
    CFDB_WLTOKEN_CONFIGTXN_GETGENERATION = 13,
    CFDB_WLTOKEN_CONFIGTXN_GET = 14,
    CFDB_WLTOKEN_CONFIGTXN_GETCLASSES = 15,
    CFDB_WLTOKEN_CONFIGTXN_GETKNOBS = 16,
    CFDB_WLTOKEN_CONFIGTXN_COMMIT = 17,
};

/* KnobValueRef's variant alternatives. */
enum cfdb_knob_kind {
    CFDB_KNOB_NONE = 0,
    CFDB_KNOB_INT = 1,
    CFDB_KNOB_DOUBLE = 2,
    CFDB_KNOB_INT64 = 3,
    CFDB_KNOB_BOOL = 4,
    CFDB_KNOB_STRING = 5,
};

/* KnobValueRef: a table whose one member is the variant (tag = enum cfdb_knob_kind). */
typedef struct cfdb_knob_value {
    uint8_t tag;
    int32_t i;
    double d;
    int64_t l;
    bool b;
    cfdb_bytes s;
} cfdb_knob_value;
typedef CFDB_OPTIONAL(cfdb_knob_value) cfdb_opt_knob_value;

/* ConfigGeneration {committedVersion, liveVersion}. */
typedef struct cfdb_config_generation {
    int64_t committedVersion;
    int64_t liveVersion;
} cfdb_config_generation;

/* ConfigKeyRef {configClass, knobName}. */
typedef struct cfdb_config_key {
    cfdb_opt_bytes configClass;
    cfdb_bytes knobName;
} cfdb_config_key;

/* ConfigMutationRef {key, value}: value absent = clear. */
typedef struct cfdb_config_mutation {
    cfdb_config_key key;
    cfdb_opt_knob_value value;
} cfdb_config_mutation;
typedef CFDB_VEC(cfdb_config_mutation) cfdb_config_mutation_vec;

/* ConfigCommitAnnotationRef: serializer(timestamp, description). */
typedef struct cfdb_config_annotation {
    double timestamp;
    cfdb_bytes description;
} cfdb_config_annotation;

typedef struct cfdb_config_get_generation_request {
    uint64_t coordinatorsHash;
    cfdb_opt_i64 lastSeenLiveVersion;
    cfdb_reply_promise reply;
} cfdb_config_get_generation_request;
typedef struct cfdb_config_get_generation_reply {
    cfdb_config_generation generation;
} cfdb_config_get_generation_reply;

typedef struct cfdb_config_get_request {
    uint64_t coordinatorsHash;
    cfdb_config_generation generation;
    cfdb_config_key key;
    cfdb_reply_promise reply;
} cfdb_config_get_request;
typedef struct cfdb_config_get_reply {
    cfdb_opt_knob_value value;
} cfdb_config_get_reply;

/* serializer(coordinatorsHash, generation, mutations, annotation, reply, arena); answered
 * with Void. */
typedef struct cfdb_config_commit_request {
    uint64_t coordinatorsHash;
    cfdb_config_generation generation;
    cfdb_config_mutation_vec mutations;
    cfdb_config_annotation annotation;
    cfdb_reply_promise reply;
} cfdb_config_commit_request;

/* 7.3.77 serializes only (coordinatorsHash, generation): the reply promise is not on the
 * wire, so a coordinator has nowhere to send the answer (see config_node.c). */
typedef struct cfdb_config_get_classes_request {
    uint64_t coordinatorsHash;
    cfdb_config_generation generation;
} cfdb_config_get_classes_request;
typedef struct cfdb_config_get_classes_reply {
    cfdb_bytes_vec configClasses;
} cfdb_config_get_classes_reply;

typedef struct cfdb_config_get_knobs_request {
    uint64_t coordinatorsHash;
    cfdb_config_generation generation;
    cfdb_opt_bytes configClass;
    cfdb_reply_promise reply;
} cfdb_config_get_knobs_request;
typedef struct cfdb_config_get_knobs_reply {
    cfdb_bytes_vec knobNames;
} cfdb_config_get_knobs_reply;

extern const fb_message cfdb_msg_config_get_generation_request, cfdb_msg_config_get_generation_reply;
extern const fb_message cfdb_msg_config_get_request, cfdb_msg_config_get_reply;
extern const fb_message cfdb_msg_config_commit_request;
extern const fb_message cfdb_msg_config_get_classes_request, cfdb_msg_config_get_classes_reply;
extern const fb_message cfdb_msg_config_get_knobs_request, cfdb_msg_config_get_knobs_reply;

/* std::hash<std::string> as libstdc++ computes it on 64-bit hosts (_Hash_bytes, seed
 * 0xc70f6907): the coordinators hash of PaxosConfigTransactionImpl::reset. */
uint64_t cfdb_std_string_hash(const void *p, size_t len);

#endif
