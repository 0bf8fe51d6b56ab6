import logging

logger = logging.getLogger(__name__)


def process(items):
    logger.info("processing %d items", len(items))
    done = [item.upper() for item in items]
    logger.info("done")
    return done
