"""Compiled (mypyc) builds of the index and graph hot paths, loaded in place of their .py files.

`modules` says which modules and where a build lives, `build` makes one, `loader` picks it up at import
time — only when it was built from exactly the sources on disk, so an edited .py file is never shadowed
by a stale binary. Pure Python stays the reference: the compiled modules give the same facts and graphs.
"""
