/*  tests/runner.c - the main of every Check suite.  Each tests/check_*.c
    defines check_suite (); automake's harness reads what Check prints.
    CK_RUN_CASE and CK_RUN_SUITE pick one test case, as Check allows.  */
#include "tests/testutil.h"

int main (void)
{
    SRunner *runner = srunner_create (check_suite ());
    srunner_run_all (runner, CK_NORMAL);
    int failed = srunner_ntests_failed (runner);
    srunner_free (runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
