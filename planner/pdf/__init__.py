"""PDF documents: typed contexts from a revision snapshot, HTML templates with paged-media CSS,
WeasyPrint bytes, and static SVG charts drawn by ``svg``."""
