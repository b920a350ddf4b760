/*  pipeline/loader.h - loading processors from shared objects.  The only
    dlopen in weir.  */
#ifndef WEIR_LOADER_H_INCLUDED
#define WEIR_LOADER_H_INCLUDED

#include <weir/plugin.h>
#include <weir/weir.h>

#include "lib/error.h"

/*  Check a processor TABLE (from a plugin, or added in code), named WHO in
    messages, and copy it into OUT as this weir reads it (a size of 0 is
    the first revision: up to 'close').  WEIR_EPLUGIN for another ABI, a
    table larger than this weir knows (a newer weir's), one smaller than
    the first revision, or one without a process callback.  */
int weir__processor_check (const weir_processor *table, const char *who, weir_processor *out, weir__err *err);

/*  Does NAME say it is a path to a plugin (a '/' in it, or ".so" at its
    end)?  */
int weir__plugin_is_path (const char *name);

/*  The path of the plugin a bare NAME would load ($WEIR_PLUGIN_PATH,
    then the installed folder), to be freed, or NULL when there is none.  */
char *weir__plugin_find (const char *name);

/*  Load NAME as weir_plugin_new does; WEIR_EPLUGIN with ERR filled, or
    WEIR_EUNKNOWN when a bare NAME is found nowhere.  */
int weir__plugin_load (const char *name, weir_plugin **out, weir__err *err);

#endif
