/*  pipeline/loader.c - finding, loading and checking processor plugins.

    A plugin is loaded with RTLD_NOW, so that a missing symbol fails here
    with the loader's message instead of in the middle of a job, and with
    RTLD_LOCAL, so that two plugins never see each other's symbols.  The
    ABI number is the first thing read from the table: nothing else in it
    is trusted before that (PostgreSQL's magic block, Redis' module API
    version and SQLite's versioned VFS do the same).  */
#include "config.h"
#include "pipeline/loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/parse.h"

#define S_SYMBOL "weir_plugin_processor"

struct weir_plugin {
    void *handle;
    char *path;
    weir_processor table;  //  as this weir reads it
};

int weir__processor_check (const weir_processor *table, const char *who, weir_processor *out, weir__err *err)
{
    //  The ABI first: nothing else in the table means anything before it
    if (table->abi != WEIR_PLUGIN_ABI)
        return weir__err_set (err, WEIR_EPLUGIN,
                              "%s was built for processor ABI %d, but this weir has ABI %d: "
                              "rebuild it against this weir's <weir/plugin.h>",
                              who, table->abi, WEIR_PLUGIN_ABI);
    //  Every revision of the table has the callbacks up to 'close'.  A
    //  table without a size was written to the first documented API,
    //  which had no 'size' (.abi = WEIR_PLUGIN_ABI and nothing more):
    //  compiled against these headers it is that first revision
    size_t least = offsetof (weir_processor, close) + sizeof table->close;
    size_t size = table->size ? table->size : least;
    if (size < least)
        return weir__err_set (err, WEIR_EPLUGIN,
                              "%s: its processor table says it is %zu bytes, fewer than any weir_processor "
                              "(%zu); set its size to sizeof (weir_processor), as WEIR_PROCESSOR_INIT does",
                              who, table->size, least);
    if (size > sizeof *out)
        return weir__err_set (err, WEIR_EPLUGIN,
                              "%s was built against a newer weir: its processor table has %zu bytes, this "
                              "weir knows %zu; rebuild it against this weir's <weir/plugin.h>",
                              who, table->size, sizeof *out);
    //  Callbacks appended after the plugin's revision stay NULL
    memset (out, 0, sizeof *out);
    memcpy (out, table, size);
    out->size = sizeof *out;
    if (!out->process)
        return weir__err_set (err, WEIR_EPLUGIN, "%s has no process callback", who);
    //  Ports are names a description writes after NAME.
    for (size_t i = 0; out->ports && out->ports[i]; i++) {
        if (i == WEIR__MAX_PORTS)
            return weir__err_set (err, WEIR_EPLUGIN, "%s declares more than %d ports", who, WEIR__MAX_PORTS);
        if (!weir__parse_is_name (out->ports[i]))
            return weir__err_set (err, WEIR_EPLUGIN,
                                  "%s: its port '%.100s' cannot be written after NAME.: a port is a letter or "
                                  "'_' then letters, digits, '_' or '-'",
                                  who, out->ports[i]);
        for (size_t k = 0; k < i; k++)
            if (strcmp (out->ports[k], out->ports[i]) == 0)
                return weir__err_set (err, WEIR_EPLUGIN, "%s declares port '%.100s' twice", who, out->ports[i]);
    }
    return 0;
}

const char *weir_plugin_dir (void)
{
    return WEIR_PLUGIN_DIR;
}

int weir__plugin_is_path (const char *name)
{
    size_t n = strlen (name);
    return strchr (name, '/') || (n > 3 && strcmp (name + n - 3, ".so") == 0);
}

//  The first DIR/NAME.so that exists, from $WEIR_PLUGIN_PATH then the
//  installed folder; NULL if none.
static char *s_find (const char *name)
{
    const char *env = getenv ("WEIR_PLUGIN_PATH");
    size_t envlen = env ? strlen (env) : 0;
    char *dirs = malloc (envlen + strlen (WEIR_PLUGIN_DIR) + 2);
    if (!dirs)
        return NULL;
    snprintf (dirs, envlen + strlen (WEIR_PLUGIN_DIR) + 2, "%s%s%s", env ? env : "", env ? ":" : "",
              WEIR_PLUGIN_DIR);
    char *found = NULL, *save = NULL;
    for (char *dir = strtok_r (dirs, ":", &save); dir && !found; dir = strtok_r (NULL, ":", &save)) {
        size_t size = strlen (dir) + strlen (name) + 5;
        char *path = malloc (size);
        if (!path)
            break;
        snprintf (path, size, "%s/%s.so", dir, name);
        if (access (path, F_OK) == 0)
            found = path;
        else
            free (path);
    }
    free (dirs);
    return found;
}

char *weir__plugin_find (const char *name)
{
    return s_find (name);
}

//  The plugin being loaded, for the exit guard; under the lock
static pthread_mutex_t s_loading_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *s_loading;
static pthread_once_t s_guard_once = PTHREAD_ONCE_INIT;

//  A plugin's constructor runs inside dlopen, before weir can check
//  anything, and one that calls exit() would end the job with whatever
//  status it chose, 0 too, and no word.  The process is ending: the only
//  thing left to do is to say why, and fail.
static const char s_exit_head[] = "weir: plugin '";
static const char s_exit_tail[] = "' called exit() while it was being loaded\n";

static void s_exit_guard (void)
{
    if (!s_loading)
        return;
    ssize_t ignored = write (STDERR_FILENO, s_exit_head, sizeof s_exit_head - 1);
    ignored = write (STDERR_FILENO, s_loading, strlen (s_loading));
    ignored = write (STDERR_FILENO, s_exit_tail, sizeof s_exit_tail - 1);
    (void) ignored;
    _exit (1);
}

static void s_install_guard (void)
{
    atexit (s_exit_guard);
}

static void *s_dlopen (const char *open_path, const char *path)
{
    pthread_once (&s_guard_once, s_install_guard);
    pthread_mutex_lock (&s_loading_lock);
    s_loading = path;
    void *handle = dlopen (open_path, RTLD_NOW | RTLD_LOCAL);
    s_loading = NULL;
    pthread_mutex_unlock (&s_loading_lock);
    return handle;
}

int weir__plugin_load (const char *name, weir_plugin **out, weir__err *err)
{
    *out = NULL;
    char *path = NULL;
    if (weir__plugin_is_path (name))
        path = strdup (name);
    else if (!(path = s_find (name)))
        return weir__err_set (err, WEIR_EUNKNOWN,
                              "unknown element '%s': no builtin of that name, and no %s.so in "
                              "$WEIR_PLUGIN_PATH or %s",
                              name, name, WEIR_PLUGIN_DIR);
    if (!path)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");

    //  dlopen searches the library path for a name without '/': a plugin
    //  named by path must be that file, so make the path explicit
    char *open_path = path;
    char dotted[4200];
    if (!strchr (path, '/')) {
        snprintf (dotted, sizeof dotted, "./%s", path);
        open_path = dotted;
    }
    dlerror ();
    void *handle = s_dlopen (open_path, path);
    if (!handle) {
        const char *why = dlerror ();
        weir__err_set (err, WEIR_EPLUGIN, "plugin '%s' cannot be loaded: %s", path,
                       why ? why : "unknown reason");
        free (path);
        return WEIR_EPLUGIN;
    }
    const weir_processor *(*entry) (void);
    *(void **) &entry = dlsym (handle, S_SYMBOL);
    const weir_processor *table = entry ? entry () : NULL;
    weir_plugin *self = calloc (1, sizeof *self);
    char who[4300];
    snprintf (who, sizeof who, "plugin '%s'", path);
    int rc = 0;
    if (!self)
        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
    else if (!entry)
        rc = weir__err_set (err, WEIR_EPLUGIN,
                            "plugin '%s' is not a weir processor: it exports no %s() (see <weir/plugin.h>)",
                            path, S_SYMBOL);
    else if (!table)
        rc = weir__err_set (err, WEIR_EPLUGIN, "plugin '%s': %s() returned NULL", path, S_SYMBOL);
    else
        rc = weir__processor_check (table, who, &self->table, err);
    if (rc) {
        free (self);
        dlclose (handle);
        free (path);
        return rc;
    }
    self->handle = handle;
    self->path = path;
    *out = self;
    return 0;
}

int weir_plugin_new (const char *name, weir_plugin **out, char **error)
{
    weir__err err;
    weir__err_init (&err);
    int rc = weir__plugin_load (name, out, &err);
    if (rc && error)
        *error = strdup (err.msg);
    return rc;
}

void weir_plugin_destroy (weir_plugin **self_p)
{
    weir_plugin *self = *self_p;
    if (!self)
        return;
    dlclose (self->handle);
    free (self->path);
    free (self);
    *self_p = NULL;
}

const weir_processor *weir_plugin_table (const weir_plugin *self)
{
    return &self->table;
}

const char *weir_plugin_path (const weir_plugin *self)
{
    return self->path;
}
