/* engine_int.h - what jvm/engine.c shares with the engine files
 * (engine_jfr.c, engine_asprof.c); nothing outside src/jvm includes it.
 *
 * engine.c owns the parts both engines have: the options, the session
 * marker of a collector, the cleanup registration of a running session,
 * parsing a finished JFR file. An engine file fills an ops table with what
 * only it knows. */
#ifndef JP_JVM_ENGINE_INT_H
#define JP_JVM_ENGINE_INT_H

#include "jvm/engine.h"
#include "jvm/recorder.h"
#include "jvm/targetfs.h"

/* The directory of jprof's files in a target: markers, library copies,
 * async-profiler's output and logs. Shared by every jprof program. */
#define JVM_ENGINE_DIR "/tmp/jprof"

typedef struct jvm_engine_ops {
    const char *name;     /* "jfr", "async-profiler" */
    uint32_t unsupported; /* kinds it cannot record */
    /* JP_ERR_CONFLICT when someone else's profiler is in the way */
    jp_err (*foreign)(jvm_engine *e, jp_error *err);
    /* COLLECTOR: stops an earlier session of ours; *salvage names its
     * finished file (inner[0] == 0: nothing to read) */
    jp_err (*recover)(jvm_engine *e, jvm_tfile *salvage, bool *found, jp_error *err);
    jp_err (*start)(jvm_engine *e, const jvm_engine_window *w, jp_error *err);
    /* COLLECTOR: stops the session; *out names the finished file */
    jp_err (*finish)(jvm_engine *e, jvm_tfile *out, jp_error *err);
    /* VIEWER: the session's data so far (heap); *tail: it ends in the
     * chunk still being written */
    jp_err (*fetch)(jvm_engine *e, uint8_t **data, size_t *len, bool *tail, jp_error *err);
    /* stops the session without reading it (err may be NULL: quietly) */
    jp_err (*stop)(jvm_engine *e, jp_error *err);
    /* removes the engine's own files in the target (the session is stopped) */
    void (*release)(jvm_engine *e);
    /* the JVM is gone: drops registrations, removes files still reachable */
    void (*forget)(jvm_engine *e);
} jvm_engine_ops;

struct jvm_engine {
    const jvm_engine_ops *ops;
    jvm_proc proc;
    jvm_engine_opts opts;
    char session[64];   /* "jprof-agent" */
    bool shared_root;   /* the JVM's / is ours (host mode), seen when made */
    bool marker_shared; /* the marker was written where our / sees it too */
    bool running;
    bool touched; /* put something in the target since made */
    int guard;    /* jvm_cleanup handle of the running session (engine.c) */
    jvm_engine_window win;
    /* JDK Flight Recorder */
    jvm_recording rec; /* VIEWER: a rolling recording of recorder.c */
    /* async-profiler */
    jvm_tfile lib;  /* the library copy in the target */
    jvm_tfile out;  /* the session's JFR file (inner[0] == 0: none) */
    jvm_tfile log;  /* COLLECTOR: the profiler's log */
    jvm_tfile lock; /* VIEWER: held (flock) while we drive the profiler */
    int lock_fd;    /* -1 when not held */
    bool made_dir;  /* we created /tmp/jprof */
    unsigned seq;   /* output file counter */
    int64_t started_mono;
    uint8_t *prev_data; /* VIEWER: the last finished session's JFR */
    size_t prev_len;
};

extern const jvm_engine_ops jvm_engine_jfr_ops;
extern const jvm_engine_ops jvm_engine_asprof_ops;

/* Registers the running session's undo action (stop quietly; a collector
 * also removes its files and marker); JP_ERR_LIMIT when the table is full. */
jp_err jvm_engine_guard_on(jvm_engine *e, jp_error *err);
void jvm_engine_guard_off(jvm_engine *e);

/* Ensures the target's /tmp/jprof is a real directory owned by root, the
 * JVM's user or us (never a symlink). A VIEWER gives a directory it creates
 * to the JVM's user. */
jp_err jvm_engine_dir_ensure(jvm_engine *e, jp_error *err);

/* COLLECTOR: the "file" a marker of this engine names (out[0] == 0: none);
 * false when there is no marker of this engine. */
bool jvm_engine_marker_file(const jvm_engine *e, char *out, size_t len);

#endif
