/*  tests/check_loader.c - the plugin loader: by path and by name, every
    way a shared object can fail to be a weir processor, and the frozen
    plugins of every revision of the API, loaded and run.  The test
    plugins are built by make into $PLUGINS_DIR and $FROZEN_DIR.  */
#include <stddef.h>
#include <stdlib.h>
#include <weir/plugin.h>

#include "pipeline/loader.h"
#include "tests/testutil.h"

//  The path of the plugin NAME built into the folder $VAR names.
static const char *s_built (const char *var, const char *name)
{
    static char path[4096];
    const char *dir = getenv (var);
    ck_assert_msg (dir != NULL, "%s must point at the built test plugins", var);
    snprintf (path, sizeof path, "%s/%s.so", dir, name);
    return path;
}

//  The test plugin NAME's path.
static const char *s_plugin (const char *name)
{
    return s_built ("PLUGINS_DIR", name);
}

//  Load NAME, expecting CODE and a message containing WANT.
static void s_refused (const char *name, int code, const char *want)
{
    weir_plugin *plugin = (weir_plugin *) 1;
    char *error = NULL;
    ck_assert_int_eq (weir_plugin_new (name, &plugin, &error), code);
    ck_assert_ptr_null (plugin);
    ck_assert_ptr_nonnull (error);
    ck_assert_msg (strstr (error, want), "'%s' not in: %s", want, error);
    weir_free (error);
}

START_TEST (test_load_by_path)
{
    weir_plugin *plugin;
    char *error = NULL;
    ck_assert_int_eq (weir_plugin_new (s_plugin ("probe"), &plugin, &error), 0);
    ck_assert_ptr_null (error);
    const weir_processor *table = weir_plugin_table (plugin);
    ck_assert_int_eq (table->abi, WEIR_PLUGIN_ABI);
    ck_assert_uint_eq (table->size, sizeof (weir_processor));
    ck_assert_str_eq (table->name, "probe");
    ck_assert_ptr_nonnull (table->process);
    ck_assert_str_eq (weir_plugin_path (plugin), s_plugin ("probe"));
    weir_plugin_destroy (&plugin);
    ck_assert_ptr_null (plugin);
    weir_plugin_destroy (&plugin);
}
END_TEST

START_TEST (test_load_by_name)
{
    //  A bare name is NAME.so in a folder of $WEIR_PLUGIN_PATH
    const char *dir = getenv ("PLUGINS_DIR");
    char path[4200];
    snprintf (path, sizeof path, "/nonexistent:%s", dir);
    setenv ("WEIR_PLUGIN_PATH", path, 1);
    weir_plugin *plugin;
    ck_assert_int_eq (weir_plugin_new ("probe", &plugin, NULL), 0);
    ck_assert_str_eq (weir_plugin_path (plugin), s_plugin ("probe"));
    weir_plugin_destroy (&plugin);
    s_refused ("nosuchplugin", WEIR_EUNKNOWN, "no nosuchplugin.so in $WEIR_PLUGIN_PATH");
    unsetenv ("WEIR_PLUGIN_PATH");
}
END_TEST

START_TEST (test_abi_is_checked_both_ways)
{
    char want[128];
    snprintf (want, sizeof want, "was built for processor ABI %d, but this weir has ABI %d",
              WEIR_PLUGIN_ABI + 1, WEIR_PLUGIN_ABI);
    s_refused (s_plugin ("wrong_abi"), WEIR_EPLUGIN, want);
    snprintf (want, sizeof want, "was built for processor ABI %d, but this weir has ABI %d",
              WEIR_PLUGIN_ABI - 1, WEIR_PLUGIN_ABI);
    s_refused (s_plugin ("old_abi"), WEIR_EPLUGIN, want);
}
END_TEST

START_TEST (test_not_a_processor)
{
    s_refused (s_plugin ("no_symbol"), WEIR_EPLUGIN, "exports no weir_plugin_processor()");
    s_refused (s_plugin ("no_process"), WEIR_EPLUGIN, "has no process callback");
    s_refused ("/nonexistent/x.so", WEIR_EPLUGIN, "cannot be loaded");
    //  A file that is no shared object
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/text.so", dir);
    testutil_write (path, "not ELF\n", 8);
    s_refused (path, WEIR_EPLUGIN, "cannot be loaded");
    testutil_rmdir (dir);
}
END_TEST

static int s_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    return weir_emit (st, rec);
}

static void s_close (weir_stage *st, void *state)
{
    (void) st;
    (void) state;
}

START_TEST (test_table_sizes)
{
    weir__err err;
    weir__err_init (&err);
    weir_processor table = {WEIR_PROCESSOR_INIT, .name = "t", .process = s_process}, out;
    ck_assert_int_eq (weir__processor_check (&table, "t", &out, &err), 0);
    ck_assert_ptr_eq (out.process, s_process);
    ck_assert_uint_eq (out.size, sizeof out);
    //  No size: written to the first documented API, which had none, and
    //  read as the first revision of the table
    table.size = 0;
    table.close = s_close;
    memset (&out, 0xff, sizeof out);
    ck_assert_int_eq (weir__processor_check (&table, "t", &out, &err), 0);
    ck_assert_ptr_eq (out.process, s_process);
    ck_assert_ptr_eq (out.close, s_close);
    ck_assert_uint_eq (out.size, sizeof out);
    //  The revision before ports: whatever follows it in memory, no ports
    static const char *const ports[] = {"a", NULL};
    table.size = offsetof (weir_processor, ports);
    table.ports = ports;
    ck_assert_int_eq (weir__processor_check (&table, "t", &out, &err), 0);
    ck_assert_ptr_null (out.ports);
    table.ports = NULL;
    //  Too small for any revision of the table
    table.size = 8;
    ck_assert_int_eq (weir__processor_check (&table, "t", &out, &err), WEIR_EPLUGIN);
    ck_assert_msg (strstr (err.msg, "set its size to sizeof (weir_processor)"), "%s", err.msg);
    //  Larger than this weir knows: built against a newer one
    table.size = sizeof table + 8;
    ck_assert_int_eq (weir__processor_check (&table, "t", &out, &err), WEIR_EPLUGIN);
    ck_assert_msg (strstr (err.msg, "built against a newer weir"), "%s", err.msg);
}
END_TEST

//  The frozen plugin NAME's path.
static const char *s_frozen (const char *name)
{
    return s_built ("FROZEN_DIR", name);
}

//  range count=COUNT ! the frozen plugin NAME with PROPS ! null: it runs,
//  and passes OUT records on.  Returns the pipe, run.
static weir_pipe *s_run_frozen (const char *name, const char *props, const char *count, uint64_t out)
{
    char text[4400];
    snprintf (text, sizeof text, "range count=%s ! %s %s ! null", count, s_frozen (name), props);
    weir_pipe *pipe;
    ck_assert_int_eq (weir_pipe_new (&pipe), 0);
    ck_assert_int_eq (weir_pipe_parse (pipe, text), 0);
    ck_assert_int_eq (weir_pipe_set_epoch_records (pipe, 400), 0);
    ck_assert_msg (weir_pipe_run (pipe) == 0, "%s: %s", name, weir_pipe_error (pipe));
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    ck_assert_int_eq (weir_pipe_stats (pipe, 1, &st), 0);
    ck_assert_uint_eq (st.records_out, out);
    return pipe;
}

START_TEST (test_frozen_plugins_load_and_run)
{
    //  Plugins as they were written to each revision of the API
    const char *names[] = {"first_api", "small_table", "full_table"};
    const char *tables[] = {"first", "small", "full"};
    for (size_t i = 0; i < 3; i++) {
        weir_plugin *plugin;
        char *error = NULL;
        ck_assert_msg (weir_plugin_new (s_frozen (names[i]), &plugin, &error) == 0, "%s: %s", names[i],
                       error);
        const weir_processor *table = weir_plugin_table (plugin);
        ck_assert_int_eq (table->abi, WEIR_PLUGIN_ABI);
        ck_assert_uint_eq (table->size, sizeof (weir_processor));
        ck_assert_str_eq (table->name, tables[i]);
        ck_assert_ptr_nonnull (table->process);
        weir_plugin_destroy (&plugin);
    }
    //  The table that declares its properties keeps them; an older one,
    //  smaller, reads as declaring none (NULL, not what follows it)
    weir_plugin *plugin;
    char *error = NULL;
    ck_assert_msg (weir_plugin_new (s_frozen ("props_table"), &plugin, &error) == 0, "props_table: %s", error);
    const weir_property_info *props = weir_plugin_table (plugin)->props;
    ck_assert_ptr_nonnull (props);
    ck_assert_str_eq (props[0].name, "keep");
    ck_assert_str_eq (props[0].fallback, "1");
    ck_assert_str_eq (props[1].name, "label");
    ck_assert_ptr_null (props[1].fallback);
    ck_assert_ptr_null (props[2].name);
    weir_plugin_destroy (&plugin);
    ck_assert_msg (weir_plugin_new (s_frozen ("small_table"), &plugin, &error) == 0, "small_table: %s", error);
    ck_assert_ptr_null (weir_plugin_table (plugin)->props);
    weir_plugin_destroy (&plugin);
    weir_pipe *pipe = s_run_frozen ("first_api", "min=600", "1000", 400);
    weir_pipe_destroy (&pipe);
    pipe = s_run_frozen ("small_table", "", "1000", 1000);
    weir_pipe_destroy (&pipe);
    //  Named outputs: each port a branch of its own
    ck_assert_msg (weir_plugin_new (s_frozen ("ports_table"), &plugin, &error) == 0, "ports_table: %s", error);
    ck_assert_str_eq (weir_plugin_table (plugin)->ports[1], "odd");
    weir_plugin_destroy (&plugin);
    char text[4400];
    snprintf (text, sizeof text, "range count=1001 ! %s name=p  p.odd ! null  p.even ! null",
              s_frozen ("ports_table"));
    ck_assert_int_eq (weir_pipe_new (&pipe), 0);
    ck_assert_int_eq (weir_pipe_parse (pipe, text), 0);
    ck_assert_msg (weir_pipe_run (pipe) == 0, "ports_table: %s", weir_pipe_error (pipe));
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    ck_assert_int_eq (weir_pipe_stats (pipe, 2, &st), 0);
    ck_assert_uint_eq (st.records_in, 500);
    ck_assert_int_eq (weir_pipe_stats (pipe, 3, &st), 0);
    ck_assert_uint_eq (st.records_in, 501);
    weir_pipe_destroy (&pipe);
    //  1000 records and ["end", 3] after three epochs
    pipe = s_run_frozen ("full_table", "threads=3 scale=2", "1000", 1001);
    size_t stage;
    const char *name;
    double value, seen = -1, epoch = -1;
    for (size_t m = 0; weir_pipe_metric (pipe, m, &stage, &name, &value) == 0; m++) {
        ck_assert_uint_eq (stage, 1);
        if (strcmp (name, "seen") == 0)
            seen = value;
        else if (strcmp (name, "epoch") == 0)
            epoch = value;
    }
    ck_assert_double_eq (seen, 1000);
    ck_assert_double_eq (epoch, 3);
    weir_pipe_destroy (&pipe);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("loader");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_load_by_path);
    tcase_add_test (tc, test_load_by_name);
    tcase_add_test (tc, test_abi_is_checked_both_ways);
    tcase_add_test (tc, test_not_a_processor);
    tcase_add_test (tc, test_table_sizes);
    tcase_add_test (tc, test_frozen_plugins_load_and_run);
    suite_add_tcase (s, tc);
    return s;
}
