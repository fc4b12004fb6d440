"""What a command does when it spans the layers, below the command line.

The CLI (`subsum.cli`) parses options and renders reports; the work of a
command that chooses between the reference model, the implementation,
plug-ins and Spark lives here, as plain functions a test or a script can
call (`match.match_files`).
"""
