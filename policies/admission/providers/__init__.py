"""Providers of upstream's Go-only admission checks: each module holds ``WEBHOOKS`` (see
``policies/admission/webhooks.py``); every module here is registered on first use."""
