/* otlp_proto.h - the field numbers of the OpenTelemetry profiles signal
 * that otlp_decode.c reads and otlp_encode.c writes: opentelemetry-proto
 * v1.10.0 to v1.11.0, package opentelemetry.proto.profiles.v1development
 * (Alpha; sent to POST /v1development/profiles). Every message's tables are
 * in one ProfilesDictionary shared by the whole request; index 0 of each
 * table is the zero value. Stacks list locations leaf first; a location's
 * lines list inlined callees before their callers. No code here. */
#ifndef JP_WIRE_OTLP_PROTO_H
#define JP_WIRE_OTLP_PROTO_H

enum {
    /* ExportProfilesServiceRequest and ProfilesData (the same two fields) */
    OTLP_DATA_RESOURCE_PROFILES = 1,
    OTLP_DATA_DICTIONARY = 2,
    /* ProfilesDictionary */
    OTLP_DICT_MAPPING = 1,
    OTLP_DICT_LOCATION = 2,
    OTLP_DICT_FUNCTION = 3,
    OTLP_DICT_LINK = 4,
    OTLP_DICT_STRING = 5,
    OTLP_DICT_ATTRIBUTE = 6,
    OTLP_DICT_STACK = 7,
    /* ResourceProfiles */
    OTLP_RP_RESOURCE = 1,
    OTLP_RP_SCOPE_PROFILES = 2,
    /* Resource */
    OTLP_RESOURCE_ATTRIBUTES = 1,
    /* ScopeProfiles */
    OTLP_SP_SCOPE = 1,
    OTLP_SP_PROFILES = 2,
    /* InstrumentationScope */
    OTLP_SCOPE_NAME = 1,
    OTLP_SCOPE_VERSION = 2,
    /* Profile */
    OTLP_PROFILE_SAMPLE_TYPE = 1,
    OTLP_PROFILE_SAMPLES = 2,
    OTLP_PROFILE_TIME = 3, /* fixed64 */
    OTLP_PROFILE_DURATION = 4,
    OTLP_PROFILE_PERIOD_TYPE = 5,
    OTLP_PROFILE_PERIOD = 6,
    OTLP_PROFILE_ATTRIBUTES = 11,
    /* ValueType */
    OTLP_VT_TYPE = 1,
    OTLP_VT_UNIT = 2,
    /* Sample */
    OTLP_SAMPLE_STACK = 1,
    OTLP_SAMPLE_ATTRIBUTES = 2,
    OTLP_SAMPLE_VALUES = 4,
    OTLP_SAMPLE_TIMESTAMPS = 5, /* repeated fixed64 */
    /* Mapping */
    OTLP_MAPPING_FILENAME = 4,
    /* Stack */
    OTLP_STACK_LOCATIONS = 1,
    /* Location */
    OTLP_LOCATION_MAPPING = 1,
    OTLP_LOCATION_ADDRESS = 2,
    OTLP_LOCATION_LINES = 3,
    OTLP_LOCATION_ATTRIBUTES = 4,
    /* Line */
    OTLP_LINE_FUNCTION = 1,
    /* Function */
    OTLP_FUNCTION_NAME = 1,
    OTLP_FUNCTION_SYSTEM_NAME = 2,
    /* Link */
    OTLP_LINK_TRACE_ID = 1,
    OTLP_LINK_SPAN_ID = 2,
    /* KeyValueAndUnit (attribute_table) */
    OTLP_KVU_KEY = 1,
    OTLP_KVU_VALUE = 2,
    /* KeyValue (Resource.attributes) */
    OTLP_KV_KEY = 1,
    OTLP_KV_VALUE = 2,
    OTLP_KV_KEY_STRINDEX = 3,
    /* AnyValue */
    OTLP_ANY_STRING = 1,
    OTLP_ANY_BOOL = 2,
    OTLP_ANY_INT = 3,
    OTLP_ANY_STRING_STRINDEX = 8,
};

/* Semantic-convention keys jprof reads and writes. */
#define OTLP_THREAD_NAME "thread.name"
#define OTLP_FRAME_TYPE "profile.frame.type"

#endif
