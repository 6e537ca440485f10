"""Shared NAS volumes: ReadWriteMany claims that survive `pulumi destroy`."""
