"""The upstream-port layer: everything upstream decides only in Go, written in our own code.

One module per upstream source and API group; every check takes ``(obj, operation, old, cluster)``
and returns coded :class:`~modules.upstream.field.FieldError` values that render as upstream's
messages. See ``README.md`` beside this file for where a new check goes and how it is measured.
"""
