"""The web side: the Python bridge the browser worker calls (``web.bridge``), the static front end
(``web/static``) and the server. Importing this package imports nothing beyond the standard library."""
