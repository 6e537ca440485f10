"""One Kubernetes vocabulary for every port, rule and the simulator: Go's quoting and integer
parsing (``go``), quantities, name formats, object scope and Volcano's resource units.
Nothing outside this package re-implements them."""
