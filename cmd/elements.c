/*  cmd/elements.c - weir elements: the builtin elements and their
    properties, from the engine's own tables.  */
#include "config.h"
#include "cmd.h"

const char cmd_elements_help[] = "usage: weir elements\n"
                                 "\n"
                                 "List the builtin readers, processors and writers with their properties\n"
                                 "and defaults, and the properties every element takes.\n";

const char *cmd_kind_name (weir_element_kind kind)
{
    return kind == WEIR_ELEMENT_READER ? "reader" : kind == WEIR_ELEMENT_WRITER ? "writer" : "processor";
}

static void s_print_props (const weir_property_info *p)
{
    for (; p && p->name; p++) {
        char head[64];
        if (p->fallback)
            snprintf (head, sizeof head, "%s=%s", p->name, p->fallback);
        else
            snprintf (head, sizeof head, "%s=...", p->name);
        printf ("      %-20s %s\n", head, p->description);
    }
}

int cmd_elements (int argc, char **argv)
{
    (void) argv;
    if (argc > 1) {
        fputs (cmd_elements_help, stderr);
        return CMD_EXIT_USAGE;
    }
    const weir_element_kind kinds[] = {WEIR_ELEMENT_READER, WEIR_ELEMENT_PROCESSOR, WEIR_ELEMENT_WRITER};
    for (size_t k = 0; k < 3; k++) {
        printf ("%ss:\n", cmd_kind_name (kinds[k]));
        for (const weir_element_info *e = weir_elements (); e->name; e++) {
            if (e->kind != kinds[k])
                continue;
            printf ("  %s  %s\n", e->name, e->description);
            s_print_props (e->props);
        }
        printf ("\n");
    }
    printf ("every element also takes:\n");
    s_print_props (weir_common_properties ());
    printf ("\nNumbers take k, M and G suffixes (thousand, million, billion).\n");
    return CMD_EXIT_OK;
}
