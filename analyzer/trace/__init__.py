"""Request paths between two symbols (`analyze trace`): algorithms apart from rendering."""
