"""Scale-out on Dask (optional extra ``pipeweave[dask]``): prediction, training and tuning on a cluster.

Nothing here imports dask until it is called. ``connect("local:2")`` starts a local cluster of
two worker processes (one thread each); any other address is a running scheduler
(``tcp://host:8786``).

- :func:`predict_dask`: partition-wise featurization and prediction (``map_partitions``) of a
  Dask DataFrame of launches; the same values as :meth:`PipeweaveRegressor.predict`, row for row.
- :func:`predict_files`: CSV/parquet launches in, partitioned parquet out (``predict --dask``).
- :func:`train_dask`: featurize partitions on the workers and train with ``xgboost.dask``;
  returns a :class:`~pipeweave.model.PipeweaveRegressor` saved like any other (same file, stamp).
- :func:`tune_dask`: optuna workers on the cluster sharing one RDB study (``tune --dask``).
"""

from ._dask import connect, is_dask_collection, predict_dask, predict_files, train_dask, tune_dask

__all__ = ["connect", "is_dask_collection", "predict_dask", "predict_files", "train_dask", "tune_dask"]
