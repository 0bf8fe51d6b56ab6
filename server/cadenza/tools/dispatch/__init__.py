"""Tool dispatch, split by behaviour: each module one narrow job."""
