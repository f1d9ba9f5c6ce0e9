//! Compaction (issue 6 §3) against a running server: a partitioned table gets many small appends through the
//! Iceberg REST API (iceberg-rust's writers and `fast_append`), then position and equality delete files; the
//! engine compacts it; iceberg-rust's own scan (which applies delete files) must return exactly the same rows.
//!
//! How the test reaches the files: iceberg-rust 0.10 has no S3 FileIO, so the test opens a second `Catalog`
//! on the server's data directory (SQLite in WAL mode and the blob directory are safe to share between
//! processes) and uses the engine's `table_file_io`, the FileIO over the table's storage, for every byte.
//! Appends commit through the server's REST endpoint; delete-file snapshots (which iceberg-rust's transactions
//! cannot build) commit through the same catalog commit function the REST handler calls. The engine itself
//! runs in-process on that catalog, exactly as the maintenance runner will run it inside the server.
//!
//! This file is the fixture; `rows.rs` checks what compaction keeps and how it orders it, `concurrency.rs` what
//! happens to commits made while it runs.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, Int32Array, Int64Array, RecordBatch, StringArray};
use futures::TryStreamExt;
use http::{Method as M, StatusCode};
use iceberg::arrow::schema_to_arrow_schema;
use iceberg::io::FileIO;
use iceberg::spec::{
    DataContentType, DataFile, DataFileFormat, FormatVersion, Literal, ManifestList,
    ManifestListWriter, ManifestStatus, ManifestWriterBuilder, NestedField, Operation,
    PartitionKey, PrimitiveType, Schema, Snapshot, SnapshotReference, SnapshotRetention, Struct,
    Summary, Transform, Type, UnboundPartitionSpec,
};
use iceberg::table::Table;
use iceberg::transaction::{ApplyTransactionAction, Transaction};
use iceberg::writer::base_writer::data_file_writer::DataFileWriterBuilder;
use iceberg::writer::base_writer::equality_delete_writer::{
    EqualityDeleteFileWriterBuilder, EqualityDeleteWriterConfig,
};
use iceberg::writer::file_writer::ParquetWriterBuilder;
use iceberg::writer::file_writer::location_generator::{
    DefaultFileNameGenerator, DefaultLocationGenerator,
};
use iceberg::writer::file_writer::rolling_writer::RollingFileWriterBuilder;
use iceberg::writer::{IcebergWriter, IcebergWriterBuilder};
use iceberg::{
    Catalog as _, NamespaceIdent, TableCreation, TableIdent, TableRequirement, TableUpdate,
};
use iceberg_catalog_rest::RestCatalog;
use parquet::file::properties::WriterProperties;
use serde_json::{Value, json};
use tablebay_catalog::{AccountId, Catalog, TableArn, TableChange, TableRef};
use tablebay_compaction::{CompactionSettings, Strategy, compact_table, table_file_io};

use crate::server::{ACCOUNT, TestServer};

mod concurrency;
mod rows;

const PARTITIONS: i32 = 2;
const ROWS_PER_FILE: i64 = 50;

/// The server, a REST catalog on it, a second catalog on its data directory, and the table.
struct Fixture {
    server: TestServer,
    rest: RestCatalog,
    catalog: Catalog,
    io: FileIO,
    ident: TableIdent,
    arn: TableArn,
}

async fn fixture(bucket: &str) -> Fixture {
    let server = TestServer::start();
    let response = server
        .call(M::PUT, "/buckets", json!({ "name": bucket }))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let warehouse = response.json::<Value>().await.unwrap()["arn"]
        .as_str()
        .unwrap()
        .to_string();
    let rest = server.rest_catalog(&warehouse).await;
    let ns = NamespaceIdent::new("compaction".to_string());
    rest.create_namespace(&ns, HashMap::new()).await.unwrap();
    let schema = Schema::builder()
        .with_schema_id(0)
        .with_fields(vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)).into(),
            NestedField::optional(2, "name", Type::Primitive(PrimitiveType::String)).into(),
            NestedField::required(3, "part", Type::Primitive(PrimitiveType::Int)).into(),
        ])
        .build()
        .unwrap();
    let spec = UnboundPartitionSpec::builder()
        .add_partition_field(3, "part", Transform::Identity)
        .unwrap()
        .build();
    let creation = TableCreation::builder()
        .name("events".to_string())
        .schema(schema)
        .partition_spec(spec)
        .build();
    rest.create_table(&ns, creation).await.unwrap();
    let ident = TableIdent::new(ns, "events".to_string());

    let catalog = server.open_catalog().await;
    let location = rest
        .load_table(&ident)
        .await
        .unwrap()
        .metadata()
        .location()
        .to_string();
    let table_id = location
        .trim_start_matches("s3://")
        .trim_end_matches("--table-s3");
    let arn = TableArn::parse(&format!("{}/table/{table_id}", warehouse)).unwrap();
    let io = table_file_io(&catalog.table_files(arn.table_id));
    Fixture {
        server,
        rest,
        catalog,
        io,
        ident,
        arn,
    }
}

impl Fixture {
    /// The table as the REST catalog serves it, reading and writing files through the object service.
    async fn table(&self) -> Table {
        let loaded = self.rest.load_table(&self.ident).await.unwrap();
        Table::builder()
            .metadata(loaded.metadata_ref())
            .metadata_location(loaded.metadata_location().unwrap().to_string())
            .identifier(self.ident.clone())
            .file_io(self.io.clone())
            .runtime(iceberg::Runtime::try_current().unwrap())
            .build()
            .unwrap()
    }

    fn partition_key(&self, table: &Table, part: i32) -> PartitionKey {
        let metadata = table.metadata();
        PartitionKey::new(
            metadata.default_partition_spec().as_ref().clone(),
            metadata.current_schema().clone(),
            Struct::from_iter([Some(Literal::int(part))]),
        )
    }

    fn batch(&self, table: &Table, ids: &[i64], part: i32) -> RecordBatch {
        let schema = Arc::new(schema_to_arrow_schema(table.metadata().current_schema()).unwrap());
        let names: Vec<String> = ids.iter().map(|id| format!("row-{id}")).collect();
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(ids.to_vec())),
                Arc::new(StringArray::from(names)),
                Arc::new(Int32Array::from(vec![part; ids.len()])),
            ],
        )
        .unwrap()
    }

    fn rolling(
        &self,
        table: &Table,
        prefix: &str,
        schema: iceberg::spec::SchemaRef,
    ) -> RollingFileWriterBuilder<
        ParquetWriterBuilder,
        DefaultLocationGenerator,
        DefaultFileNameGenerator,
    > {
        RollingFileWriterBuilder::new_with_default_file_size(
            ParquetWriterBuilder::new(WriterProperties::default(), schema),
            self.io.clone(),
            DefaultLocationGenerator::new(table.metadata()).unwrap(),
            DefaultFileNameGenerator::new(
                format!("{prefix}-{}", uuid::Uuid::now_v7()),
                None,
                DataFileFormat::Parquet,
            ),
        )
    }

    /// Appends one small data file per partition through the REST catalog (`fast_append`), retrying on a
    /// commit conflict as any client would.
    async fn append(&self, first_id: i64) {
        for attempt in 0.. {
            let table = self.table().await;
            let mut files = Vec::new();
            for part in 0..PARTITIONS {
                let start = first_id + i64::from(part) * ROWS_PER_FILE;
                let ids: Vec<i64> = (start..start + ROWS_PER_FILE).collect();
                let mut writer = DataFileWriterBuilder::new(self.rolling(
                    &table,
                    "data",
                    table.metadata().current_schema().clone(),
                ))
                .build(Some(self.partition_key(&table, part)))
                .await
                .unwrap();
                writer.write(self.batch(&table, &ids, part)).await.unwrap();
                files.extend(writer.close().await.unwrap());
            }
            let tx = Transaction::new(&table);
            let tx = tx.fast_append().add_data_files(files).apply(tx).unwrap();
            match tx.commit(&self.rest).await {
                Ok(_) => return,
                Err(e) if attempt < 20 => eprintln!("append conflict, retrying: {e}"),
                Err(e) => panic!("append failed: {e}"),
            }
        }
    }

    /// Writes a position delete file of partition `part` deleting `positions` of `data_file`.
    async fn position_delete(
        &self,
        table: &Table,
        part: i32,
        data_file: &str,
        positions: &[i64],
    ) -> DataFile {
        let schema = Arc::new(
            Schema::builder()
                .with_fields(vec![
                    NestedField::required(
                        2147483546,
                        "file_path",
                        Type::Primitive(PrimitiveType::String),
                    )
                    .into(),
                    NestedField::required(2147483545, "pos", Type::Primitive(PrimitiveType::Long))
                        .into(),
                ])
                .build()
                .unwrap(),
        );
        let arrow = Arc::new(schema_to_arrow_schema(&schema).unwrap());
        let batch = RecordBatch::try_new(
            arrow,
            vec![
                Arc::new(StringArray::from(vec![
                    data_file.to_string();
                    positions.len()
                ])),
                Arc::new(Int64Array::from(positions.to_vec())),
            ],
        )
        .unwrap();
        let key = self.partition_key(table, part);
        let partition = key.data().clone();
        let mut writer = self.rolling(table, "pos-deletes", schema).build();
        writer.write(&Some(key), &batch).await.unwrap();
        let mut builder = writer.close().await.unwrap().pop().unwrap();
        builder
            .content(DataContentType::PositionDeletes)
            .partition(partition)
            .partition_spec_id(table.metadata().default_partition_spec_id());
        builder.build().unwrap()
    }

    /// Writes an equality delete file (on `id`) of partition `part`.
    async fn equality_delete(&self, table: &Table, part: i32, ids: &[i64]) -> DataFile {
        let schema = table.metadata().current_schema().clone();
        let config = EqualityDeleteWriterConfig::new(vec![1], schema.clone()).unwrap();
        let delete_schema = Arc::new(
            Schema::builder()
                .with_fields(vec![
                    NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)).into(),
                ])
                .build()
                .unwrap(),
        );
        let mut writer = EqualityDeleteFileWriterBuilder::new(
            self.rolling(table, "eq-deletes", delete_schema),
            config,
        )
        .build(Some(self.partition_key(table, part)))
        .await
        .unwrap();
        writer.write(self.batch(table, ids, part)).await.unwrap();
        writer.close().await.unwrap().pop().unwrap()
    }

    /// Commits delete files as a `delete` snapshot: a new delete manifest plus every manifest of the current
    /// snapshot, through the catalog's commit (the function the REST commit handler calls).
    async fn commit_deletes(&self, table: &Table, deletes: Vec<DataFile>) {
        self.try_commit_deletes(table, deletes).await.unwrap();
    }

    async fn try_commit_deletes(
        &self,
        table: &Table,
        deletes: Vec<DataFile>,
    ) -> Result<(), tablebay_catalog::CommitError> {
        let metadata = table.metadata();
        let current = metadata.current_snapshot().unwrap();
        let snapshot_id = rand::random::<i64>() & i64::MAX;
        let sequence = metadata.last_sequence_number() + 1;
        let base = metadata.location();
        let manifest_path = format!("{base}/metadata/{}-m0.avro", uuid::Uuid::now_v7());
        let mut writer = ManifestWriterBuilder::new(
            self.io.new_output(&manifest_path).unwrap(),
            Some(snapshot_id),
            metadata.current_schema().clone(),
            metadata.default_partition_spec().as_ref().clone(),
        )
        .build_v2_deletes();
        let mut records = 0;
        for delete in deletes {
            records += delete.record_count();
            writer.add_file(delete, -1).unwrap();
        }
        let manifest = writer.write_manifest_file().await.unwrap();
        let list = self.manifest_list(current.manifest_list()).await;
        let list_path = format!(
            "{base}/metadata/snap-{snapshot_id}-1-{}.avro",
            uuid::Uuid::now_v7()
        );
        let mut list_writer = ManifestListWriter::v2(
            self.io
                .new_output(&list_path)
                .unwrap()
                .writer()
                .await
                .unwrap(),
            snapshot_id,
            Some(current.snapshot_id()),
            sequence,
        );
        list_writer
            .add_manifests(std::iter::once(manifest).chain(list.entries().iter().cloned()))
            .unwrap();
        list_writer.close().await.unwrap();
        let snapshot = Snapshot::builder()
            .with_snapshot_id(snapshot_id)
            .with_parent_snapshot_id(Some(current.snapshot_id()))
            .with_sequence_number(sequence)
            .with_timestamp_ms(chrono::Utc::now().timestamp_millis())
            .with_manifest_list(list_path)
            .with_summary(Summary {
                operation: Operation::Delete,
                additional_properties: HashMap::from([(
                    "added-delete-files-records".to_string(),
                    records.to_string(),
                )]),
            })
            .with_schema_id(metadata.current_schema_id())
            .build();
        let change = TableChange {
            requirements: vec![TableRequirement::RefSnapshotIdMatch {
                r#ref: "main".into(),
                snapshot_id: Some(current.snapshot_id()),
            }],
            updates: vec![
                TableUpdate::AddSnapshot { snapshot },
                TableUpdate::SetSnapshotRef {
                    ref_name: "main".into(),
                    reference: SnapshotReference::new(
                        snapshot_id,
                        SnapshotRetention::branch(None, None, None),
                    ),
                },
            ],
        };
        let row = self
            .catalog
            .table(&TableRef::Arn(self.arn.clone()))
            .await
            .unwrap();
        self.catalog
            .commit_table(&row, change, &AccountId::parse(ACCOUNT).unwrap())
            .await
            .map(|_| ())
    }

    /// Deletes the first row of the `n`-th data file (by path, wrapping) of partition 0 with a position delete,
    /// retrying on a commit conflict from scratch (as an engine re-plans); returns the id deleted.
    async fn delete_a_row(&self, n: usize) -> i64 {
        for _ in 0..30 {
            let table = self.table().await;
            let (data, _) = self.live_files().await;
            let mut part0: Vec<&DataFile> = data
                .iter()
                .map(|(d, _)| d)
                .filter(|d| d.partition() == &Struct::from_iter([Some(Literal::int(0))]))
                .collect();
            part0.sort_by(|a, b| a.file_path().cmp(b.file_path()));
            let file = part0[n % part0.len()];
            let bytes = self
                .io
                .new_input(file.file_path())
                .unwrap()
                .read()
                .await
                .unwrap();
            let mut reader =
                parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
                    .unwrap()
                    .build()
                    .unwrap();
            let first = reader.next().unwrap().unwrap();
            let id = first
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .value(0);
            let delete = self
                .position_delete(&table, 0, file.file_path(), &[0])
                .await;
            match self.try_commit_deletes(&table, vec![delete]).await {
                Ok(()) => return id,
                Err(tablebay_catalog::CommitError::Conflict(e)) => {
                    eprintln!("delete conflict, re-planning: {e}")
                }
                Err(e) => panic!("delete failed: {e}"),
            }
        }
        panic!("the delete kept conflicting");
    }

    async fn manifest_list(&self, location: &str) -> ManifestList {
        let bytes = self.io.new_input(location).unwrap().read().await.unwrap();
        ManifestList::parse_with_version(&bytes, FormatVersion::V2).unwrap()
    }

    /// Every row of the current snapshot, sorted, as iceberg-rust's scan returns it (delete files applied).
    async fn rows(&self) -> Vec<(i64, String, i32)> {
        let table = self.table().await;
        let batches: Vec<RecordBatch> = table
            .scan()
            .select_all()
            .build()
            .unwrap()
            .to_arrow()
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let mut rows = Vec::new();
        for batch in batches {
            let ids = batch
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap();
            let names = batch
                .column(1)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            let parts = batch
                .column(2)
                .as_any()
                .downcast_ref::<Int32Array>()
                .unwrap();
            for i in 0..batch.num_rows() {
                rows.push((ids.value(i), names.value(i).to_string(), parts.value(i)));
            }
        }
        rows.sort();
        rows
    }

    /// The live data and delete files of the current snapshot, with their data sequence numbers.
    async fn live_files(&self) -> (Vec<(DataFile, i64)>, Vec<DataFile>) {
        let table = self.table().await;
        let metadata = table.metadata();
        let list = self
            .manifest_list(metadata.current_snapshot().unwrap().manifest_list())
            .await;
        let (mut data, mut deletes) = (Vec::new(), Vec::new());
        for manifest in list.entries() {
            for entry in manifest.load_manifest(&self.io).await.unwrap().entries() {
                if entry.status() == ManifestStatus::Deleted {
                    continue;
                }
                match entry.content_type() {
                    DataContentType::Data => {
                        data.push((entry.data_file().clone(), entry.sequence_number().unwrap()))
                    }
                    _ => deletes.push(entry.data_file().clone()),
                }
            }
        }
        (data, deletes)
    }

    async fn compact(
        &self,
        target: u64,
        strategy: Strategy,
    ) -> tablebay_compaction::CompactionReport {
        let settings = CompactionSettings {
            target_file_size_bytes: target,
            strategy,
        };
        compact_table(&self.catalog, &TableRef::Arn(self.arn.clone()), &settings)
            .await
            .unwrap()
    }
}
