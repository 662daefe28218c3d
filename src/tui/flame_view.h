/* flame_view.h - the interactive flame view of one profile, without a
 * terminal: a recording (--jfr), a comparison (--diff), and the Flame
 * screen's windows of every source (screen_flame.c).
 *
 * State in, canvas out: tui_flame_view_key() changes the state and says
 * what the screen loop should do; tui_flame_view_update() recomputes what
 * depends on the state (layout, search, top table) and
 * tui_flame_view_render() draws it into a canvas. Only src/tui/terminal.c
 * talks to curses, so everything here can be driven from unit tests.
 *
 * Panels (htop-like): the flame panel, the top table and the I/O panel
 * each handle their own keys (flame_panel.h, flame_table.h, flame_io.h);
 * this module handles the keys of the whole view and the modal parts
 * (search prompt, help, GC).
 *
 * Ownership: tui_flame_view_new() borrows the profile, the report and the
 * path (all must outlive the view) and returns a heap object freed by
 * tui_flame_view_free(). Not thread-safe. */
#ifndef JP_TUI_FLAME_VIEW_H
#define JP_TUI_FLAME_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jfr/jfr.h"
#include "model/diff.h"
#include "model/flame.h"
#include "model/iodetail.h"
#include "model/profile.h"
#include "tui/canvas.h"
#include "tui/flame_layout.h"

/* Keys: printable ASCII as itself, Enter '\n', Tab '\t', Esc 27; the rest
 * above the Unicode range so they never clash with typed text. */
enum {
    TUI_KEY_ENTER = '\n',
    TUI_KEY_TAB = '\t',
    TUI_KEY_ESC = 27,
    TUI_KEY_UP = 0x110001,
    TUI_KEY_DOWN,
    TUI_KEY_LEFT,
    TUI_KEY_RIGHT,
    TUI_KEY_HOME,
    TUI_KEY_END,
    TUI_KEY_PGUP,
    TUI_KEY_PGDN,
    TUI_KEY_BACKSPACE,
    TUI_KEY_RESIZE,
    TUI_KEY_F1,
    TUI_KEY_F3,
    TUI_KEY_F10,
    TUI_KEY_F2,
    TUI_KEY_F4,
    TUI_KEY_F5,
    TUI_KEY_F6,
    TUI_KEY_F7,
    TUI_KEY_F8,
    TUI_KEY_F9,
};

typedef enum tui_action {
    TUI_ACTION_NONE = 0, /* nothing changed */
    TUI_ACTION_REDRAW,   /* state changed: update and render */
    TUI_ACTION_QUIT
} tui_action;

typedef enum tui_focus { TUI_FOCUS_FLAME = 0, TUI_FOCUS_TABLE } tui_focus;

#define TUI_PATTERN_MAX 256

typedef struct tui_flame_view {
    /* borrowed input */
    const jp_profile *prof;
    const jfr_report *rep;
    const char *path;
    /* screen size and panel geometry (tui_flame_view_update) */
    int rows, cols;
    int flame_top, flame_h, table_top, table_h;
    /* what is shown */
    jp_kind kind;
    bool by_value;
    bool threads;
    jp_flame *fwd; /* the tree of `kind` */
    jp_flame *rev; /* callers tree while reversed, else NULL */
    jp_flame *cur; /* fwd or rev */
    /* zoom stack of nodes of `cur`; the zoom root is the top or node 0 */
    uint32_t *zoom;
    size_t nzoom, zoom_cap;
    uint32_t sel;        /* selected node of `cur` */
    uint32_t last_child; /* where Down goes back to after Up */
    int scroll;          /* first depth shown in the flame panel */
    /* the forward view saved while reversed */
    uint32_t *saved_zoom;
    size_t saved_nzoom, saved_cap;
    uint32_t saved_sel;
    /* search */
    char pattern[TUI_PATTERN_MAX]; /* "" = no search */
    uint8_t *matches;              /* per node of cur */
    size_t matches_cap;
    uint8_t *frame_matches; /* per profile frame, for the table */
    size_t frame_matches_cap;
    long nmatches;
    uint64_t share;
    /* prompt (search input) */
    bool prompt;
    char input[TUI_PATTERN_MAX];
    size_t input_len;
    /* top table of the zoom root */
    jp_top_row *top;
    size_t ntop;
    int top_sel, top_scroll;
    /* --io-detail: endpoints and paths of the io kind (borrowed, may be
     * NULL); shown in place of the top table while io_panel is on */
    const jp_io_detail *io;
    bool io_panel;
    int io_scroll;
    /* a comparison (tui_flame_view_set_diff): prof is diff->prof, the bars are
     * coloured by change, the table lists changes; old_cur is the old side
     * built like cur, old_map maps cur's nodes to it (rebuilt when cur
     * changes: old_of is the tree it was built for) */
    jp_diff *diff;
    const char *diff_base;
    jp_flame *old_cur;
    uint32_t *old_map;
    const jp_flame *old_of;
    double diff_max;    /* largest change of a node's total under the zoom root */
    jp_diff_row *drows; /* the table's rows; top[] holds the same frames */
    /* panels */
    tui_focus focus;
    bool help;
    /* the GC screen (G): its lines, built when it opens, and the scroll */
    struct tui_lines *gc;
    int gc_scroll;
    char msg[256];
    bool msg_error;
    /* derived, rebuilt by tui_flame_view_update when dirty */
    tui_flame_layout layout;
    bool dirty_layout, dirty_search, dirty_top;
} tui_flame_view;

/* `kind` is the kind shown first; threads puts thread names on top (the
 * profile must have been read with threads for that). */
tui_flame_view *tui_flame_view_new(const jp_profile *p, const jfr_report *rep, const char *path,
                                   jp_kind kind, bool by_value, bool threads);
void tui_flame_view_free(tui_flame_view *v);

/* Sets the screen size (any size, even 1x1). */
void tui_flame_view_resize(tui_flame_view *v, int rows, int cols);
/* Handles one key. */
tui_action tui_flame_view_key(tui_flame_view *v, int key);
/* The scroll keys of a text screen (the live and remote views): Up/Down move
 * *pos by a line, PgUp/PgDn and space by `page` lines, Home to 0, End to
 * `end`; true for those keys. The caller clamps *pos. Any other key: false,
 * *pos untouched. */
bool tui_scroll_key(int *pos, int key, int page, int end);
/* Recomputes layout, search and top table as needed; call before render. */
void tui_flame_view_update(tui_flame_view *v);
/* Draws the whole screen; resizes the canvas to the view's size. */
void tui_flame_view_render(const tui_flame_view *v, tui_canvas *c);

/* The zoom root. */
static inline uint32_t tui_flame_view_zoom_root(const tui_flame_view *v)
{
    return v->nzoom ? v->zoom[v->nzoom - 1] : 0;
}

/* Zooms into `node` (a node of v->cur); pops back out. Pop returns false
 * when not zoomed. */
void tui_flame_view_zoom_push(tui_flame_view *v, uint32_t node);
bool tui_flame_view_zoom_pop(tui_flame_view *v);

/* Shows a message in the status line until the next key. */
void tui_flame_view_message(tui_flame_view *v, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Carries what the user set in `old`, the view of the previous window of
 * the same kind, over to v, the new window's: the zoom and the selection
 * where the same frames (by name) still are, the search, the focused panel,
 * the I/O panel and the message. Nothing when the kind differs. */
void tui_flame_view_carry(tui_flame_view *v, const tui_flame_view *old);

/* Selects the kind (rebuilds the tree, keeps the zoom path where it still
 * exists); false with a message when the kind has no events. */
bool tui_flame_view_set_kind(tui_flame_view *v, jp_kind k);

/* Shows the callers of the selected frame (on) or the forward tree again. */
void tui_flame_view_reverse(tui_flame_view *v, bool on);

/* Runs a search over the zoom root; "" clears it. */
void tui_flame_view_search(tui_flame_view *v, const char *pattern);

/* Lends the view the I/O detail of its profile (NULL: none); it must live
 * as long as the view. Key i shows it while the io kind is shown. */
void tui_flame_view_set_io(tui_flame_view *v, const jp_io_detail *io);

/* Shows a comparison: the view's profile must be d->prof (borrowed, like
 * the profile; normalisation changes with key m). base labels the
 * baseline. */
void tui_flame_view_set_diff(tui_flame_view *v, jp_diff *d, const char *base);

/* A node's old total (normalised, in the view's measure), 0 without a
 * comparison. */
double tui_flame_view_old_total(const tui_flame_view *v, uint32_t node);

/* The colour of a node's bar in a comparison: grows red, shrinks blue,
 * by the size of its change against the largest under the zoom root. */
tui_style tui_flame_view_diff_style(const tui_flame_view *v, uint32_t node);

/* Style of a frame's bar. */
tui_style tui_frame_style(const jp_profile *p, uint32_t frame);

#endif
