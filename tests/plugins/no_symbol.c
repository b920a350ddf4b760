/*  tests/plugins/no_symbol.c - a shared object that is no weir plugin.  */
int not_a_plugin (void);

int not_a_plugin (void)
{
    return 42;
}
