/*  tests/check_loader.c - the plugin loader: by path and by name, and every
    way a shared object can fail to be a weir processor.  The test plugins
    are built by make into $PLUGINS_DIR.  */
#include <stddef.h>
#include <stdlib.h>
#include <weir/plugin.h>

#include "pipeline/loader.h"
#include "tests/testutil.h"

//  The test plugin NAME's path.
static const char *s_plugin (const char *name)
{
    static char path[4096];
    const char *dir = getenv ("PLUGINS_DIR");
    ck_assert_msg (dir != NULL, "PLUGINS_DIR must point at the built test plugins");
    snprintf (path, sizeof path, "%s/%s.so", dir, name);
    return path;
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

START_TEST (test_table_sizes)
{
    weir__err err;
    weir__err_init (&err);
    weir_processor table = {WEIR_PROCESSOR_INIT, .name = "t", .process = s_process}, out;
    ck_assert_int_eq (weir__processor_check (&table, "t", &out, &err), 0);
    ck_assert_ptr_eq (out.process, s_process);
    ck_assert_uint_eq (out.size, sizeof out);
    //  Too small for any revision of the table: size was never set
    table.size = 0;
    ck_assert_int_eq (weir__processor_check (&table, "t", &out, &err), WEIR_EPLUGIN);
    ck_assert_msg (strstr (err.msg, "set its size to sizeof (weir_processor)"), "%s", err.msg);
    //  Larger than this weir knows: built against a newer one
    table.size = sizeof table + 8;
    ck_assert_int_eq (weir__processor_check (&table, "t", &out, &err), WEIR_EPLUGIN);
    ck_assert_msg (strstr (err.msg, "built against a newer weir"), "%s", err.msg);
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
    suite_add_tcase (s, tc);
    return s;
}
