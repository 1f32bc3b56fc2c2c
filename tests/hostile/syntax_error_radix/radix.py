"""An implementation that does not parse."""


class RadixTree:
    def __init__(self, granule: int) -> None
        self.granule = granule
