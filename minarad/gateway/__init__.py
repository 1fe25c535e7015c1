"""The HTTP gateway and web UI, served by ``minarad`` (``MINARA_HTTP``).

:func:`minarad.gateway.server.build_gateway` builds the ASGI application
(Starlette) over an opened :class:`minarad.app.Minara`;
:func:`minarad.gateway.serve.start_gateway` serves it with uvicorn from the
daemon. The API lives under ``/v1`` (``/v1/openapi.json`` describes it);
the pages are server-rendered with a little JavaScript from ``static/``.
"""
