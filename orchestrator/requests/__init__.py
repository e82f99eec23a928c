"""What a command asks, as the library takes it: a request of a few typed groups (`groups`), the
combinations refused before anything runs (`checks`), and the user strings parsed into what the
pipeline takes (`parse`). The CLI builds the groups from its options; programs build them too."""

from .checks import validate
from .groups import CI, Command, Functions, Images, Output, RenderRequest, Request, RunRequest, SandboxSettings, Speed
from .parse import check_mode, full_image, given_functions, pipeline_options, selections, shard_of

__all__ = [
    "CI", "Command", "Functions", "Images", "Output", "RenderRequest", "Request", "RunRequest", "SandboxSettings", "Speed",
    "check_mode", "full_image", "given_functions", "pipeline_options", "selections", "shard_of", "validate",
]
