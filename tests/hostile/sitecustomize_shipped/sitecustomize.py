import builtins

builtins.FINGERPRINT = "reference"
