// Command go-tables runs the OSS Tables product guide's ossutil steps through the Tables client of Alibaba's OSS Go
// SDK v2 (github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/tables, the SDK ossutil 2.x is built on) against a
// Tablebay tables endpoint, and checks what comes back.
//
// Steps: CreateTableBucket, PutTableBucketMaintenanceConfiguration (icebergUnreferencedFileRemoval 4/10 days),
// CreateNamespace, CreateTable (ICEBERG, the guide's schema.json: event_id, event_time, event_type),
// PutTableMaintenanceConfiguration (icebergCompaction, 256 MB), GetTable by name and by table ARN, ListTables,
// the two maintenance configurations and the job status read back; with -cleanup, DeleteTable, DeleteNamespace,
// DeleteTableBucket and a GetTableBucket that must fail with 404.
//
// It prints one JSON summary on stdout (also on failure, with "ok": false and the error) and exits 1 when any
// step fails or any answer differs from what was asked for, 2 on bad usage.
//
// Credentials come from OSS_ACCESS_KEY_ID, OSS_ACCESS_KEY_SECRET and OSS_SESSION_TOKEN (the SDK's and ossutil's
// variables); everything else from flags, whose defaults come from TABLES_* variables (see -h).
//
// Addressing: an IP endpoint makes the SDK use path style; a host name endpoint gives the SDK's default
// virtual-hosted style (`<bucket>-<account>.<endpoint host>`, the bucket ARN still in the path), or path style with
// -path-style. -dial IP connects every request to IP at the URL's port whatever the host name, so virtual hosts
// work without DNS.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/credentials"
	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/tables"
)

// The guide's values (step 2 and its maintenance section).
var guideSchema = map[string]any{"fields": []any{
	map[string]any{"name": "event_id", "type": "string", "required": true},
	map[string]any{"name": "event_time", "type": "string"},
	map[string]any{"name": "event_type", "type": "string"},
}}

const (
	guideUnreferencedDays = 4
	guideNonCurrentDays   = 10
	guideTargetFileSizeMB = 256
)

type config struct {
	endpoint          string
	region            string
	accountID         string
	pathStyle         bool
	dial              string
	bucket            string
	namespace         string
	table             string
	additionalHeaders string
	cleanup           bool
	timeout           time.Duration
}

func envOr(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return fallback
}

func parseFlags() config {
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000_000)
	var c config
	flag.StringVar(&c.endpoint, "endpoint", envOr("TABLES_ENDPOINT", ""), "tables endpoint, e.g. http://127.0.0.1:8080 ($TABLES_ENDPOINT)")
	flag.StringVar(&c.region, "region", envOr("TABLES_REGION", ""), "region; must be the server's --region ($TABLES_REGION)")
	flag.StringVar(&c.accountID, "account-id", envOr("TABLES_ACCOUNT_ID", ""), "expected owner account id: the bucket ARN must be acs:osstables:<region>:<account-id>:bucket/<name> ($TABLES_ACCOUNT_ID)")
	flag.BoolVar(&c.pathStyle, "path-style", envOr("TABLES_PATH_STYLE", "") == "true", "path-style addressing instead of the SDK's default virtual-hosted style ($TABLES_PATH_STYLE=true)")
	flag.StringVar(&c.dial, "dial", envOr("TABLES_DIAL", ""), "connect to this IP (at the URL's port) whatever the host name, e.g. 127.0.0.1 ($TABLES_DIAL)")
	flag.StringVar(&c.bucket, "bucket", "go-sdk-"+suffix, "table bucket name")
	flag.StringVar(&c.namespace, "namespace", "go_ns_"+suffix, "namespace name (no hyphens, as the guide says)")
	flag.StringVar(&c.table, "table", "events", "table name")
	flag.StringVar(&c.additionalHeaders, "additional-headers", "", "comma-separated headers the signer must also sign (the SDK's Config.AdditionalHeaders), e.g. user-agent")
	flag.BoolVar(&c.cleanup, "cleanup", false, "delete the table, namespace and bucket at the end and check the bucket is gone")
	flag.DurationVar(&c.timeout, "timeout", 2*time.Minute, "overall deadline")
	flag.Parse()
	return c
}

// exchange is one HTTP request the SDK sent, as it went on the wire.
type exchange struct {
	Method  string `json:"method"`
	Host    string `json:"host"`
	Path    string `json:"path"`
	Query   string `json:"query,omitempty"`
	Status  int    `json:"status"`
	Auth    string `json:"authorization"`
	Address string `json:"dialed,omitempty"`
}

// recorder is the SDK's HTTPClient: it keeps every exchange for the summary and, with `dial`, connects to that IP.
type recorder struct {
	client    *http.Client
	mu        sync.Mutex
	exchanges []exchange
}

func newRecorder(dial string) *recorder {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	transport := &http.Transport{
		// No proxy from the environment: the endpoint is the server under test.
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dial != "" {
				_, port, err := net.SplitHostPort(addr)
				if err != nil {
					return nil, err
				}
				addr = net.JoinHostPort(dial, port)
			}
			return dialer.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost:   4,
		ResponseHeaderTimeout: 60 * time.Second,
	}
	return &recorder{client: &http.Client{
		Transport: transport,
		Timeout:   90 * time.Second,
		// The SDK's own transport does not follow redirects either.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	resp, err := r.client.Do(req)
	ex := exchange{
		Method: req.Method,
		Host:   req.URL.Host,
		Path:   req.URL.EscapedPath(),
		Query:  req.URL.RawQuery,
		Auth:   req.Header.Get("Authorization"),
	}
	if resp != nil {
		ex.Status = resp.StatusCode
	}
	r.mu.Lock()
	r.exchanges = append(r.exchanges, ex)
	r.mu.Unlock()
	return resp, err
}

// summary is what the program prints.
type summary struct {
	OK                bool            `json:"ok"`
	SDKVersion        string          `json:"sdkVersion"`
	Endpoint          string          `json:"endpoint"`
	Region            string          `json:"region"`
	Addressing        string          `json:"addressing"`
	TableBucketARN    string          `json:"tableBucketARN,omitempty"`
	Namespace         string          `json:"namespace,omitempty"`
	Table             *tableSummary   `json:"table,omitempty"`
	ListTables        []string        `json:"listTables"`
	BucketMaintenance any             `json:"bucketMaintenance,omitempty"`
	TableMaintenance  any             `json:"tableMaintenance,omitempty"`
	JobStatus         any             `json:"jobStatus,omitempty"`
	Deleted           bool            `json:"deleted"`
	AfterDelete       *serviceFailure `json:"afterDelete,omitempty"`
	Steps             []string        `json:"steps"`
	Requests          []exchange      `json:"requests"`
	Error             *failure        `json:"error,omitempty"`
}

type tableSummary struct {
	Name              string   `json:"name"`
	Namespace         []string `json:"namespace"`
	TableARN          string   `json:"tableARN"`
	Format            string   `json:"format"`
	Type              string   `json:"type"`
	VersionToken      string   `json:"versionToken"`
	WarehouseLocation string   `json:"warehouseLocation"`
	MetadataLocation  string   `json:"metadataLocation"`
	OwnerAccountID    string   `json:"ownerAccountId"`
	CreatedAt         string   `json:"createdAt"`
}

type serviceFailure struct {
	Status    int    `json:"status"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"requestId"`
	ErrorType string `json:"errorTypeHeader"`
}

type failure struct {
	Step    string          `json:"step"`
	Message string          `json:"message"`
	Service *serviceFailure `json:"service,omitempty"`
}

func asServiceFailure(err error) *serviceFailure {
	var se *oss.ServiceError
	if !errors.As(err, &se) {
		return nil
	}
	return &serviceFailure{
		Status:    se.StatusCode,
		Code:      se.Code,
		Message:   se.Message,
		RequestID: se.RequestID,
		ErrorType: se.Headers.Get("x-oss-error-type"),
	}
}

// run holds the state of one run; every step either succeeds or ends it with a failure.
type run struct {
	cfg    config
	ctx    context.Context
	client *tables.TablesClient
	out    summary
}

type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }

func (e *stepError) Unwrap() error { return e.err }

// step records `name` and returns its failure, if any, as a stepError.
func (r *run) step(name string, err error) error {
	if err != nil {
		return &stepError{step: name, err: err}
	}
	r.out.Steps = append(r.out.Steps, name)
	return nil
}

func check(step string, ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return &stepError{step: step, err: fmt.Errorf(format, args...)}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func intp(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func (r *run) guide() error {
	ctx, c, cfg := r.ctx, r.client, r.cfg

	// ossutil tables-api create-table-bucket --name …
	created, err := c.CreateTableBucket(ctx, &tables.CreateTableBucketRequest{Name: oss.Ptr(cfg.bucket)})
	if err := r.step("CreateTableBucket", err); err != nil {
		return err
	}
	arn := str(created.Arn)
	r.out.TableBucketARN = arn
	want := fmt.Sprintf(":bucket/%s", cfg.bucket)
	if cfg.accountID != "" {
		want = fmt.Sprintf("acs:osstables:%s:%s:bucket/%s", cfg.region, cfg.accountID, cfg.bucket)
	}
	if err := check("CreateTableBucket", strings.HasSuffix(arn, want) && strings.HasPrefix(arn, "acs:osstables:"),
		"bucket ARN %q, want %q", arn, want); err != nil {
		return err
	}

	bucket, err := c.GetTableBucket(ctx, &tables.GetTableBucketRequest{TableBucketARN: oss.Ptr(arn)})
	if err := r.step("GetTableBucket", err); err != nil {
		return err
	}
	if err := check("GetTableBucket", str(bucket.Arn) == arn && str(bucket.Name) == cfg.bucket,
		"got arn %q name %q", str(bucket.Arn), str(bucket.Name)); err != nil {
		return err
	}

	// aws s3tables put-table-bucket-maintenance-configuration --type icebergUnreferencedFileRemoval …
	_, err = c.PutTableBucketMaintenanceConfiguration(ctx, &tables.PutTableBucketMaintenanceConfigurationRequest{
		TableBucketARN: oss.Ptr(arn),
		Type:           oss.Ptr("icebergUnreferencedFileRemoval"),
		Value: &tables.MaintenanceValue{
			Status: oss.Ptr("enabled"),
			Settings: &tables.MaintenanceSettings{IcebergUnreferencedFileRemoval: &tables.SettingsDetail{
				UnreferencedDays: oss.Ptr(guideUnreferencedDays),
				NonCurrentDays:   oss.Ptr(guideNonCurrentDays),
			}},
		},
	})
	if err := r.step("PutTableBucketMaintenanceConfiguration", err); err != nil {
		return err
	}

	// ossutil tables-api create-namespace --table-bucket-arn … --namespace …
	ns, err := c.CreateNamespace(ctx, &tables.CreateNamespaceRequest{
		TableBucketARN: oss.Ptr(arn), Namespace: []string{cfg.namespace},
	})
	if err := r.step("CreateNamespace", err); err != nil {
		return err
	}
	if err := check("CreateNamespace", reflect.DeepEqual(ns.Namespace, []string{cfg.namespace}),
		"namespace %v", ns.Namespace); err != nil {
		return err
	}
	r.out.Namespace = cfg.namespace

	// ossutil tables-api create-table … --format ICEBERG --metadata file://schema.json
	table, err := c.CreateTable(ctx, &tables.CreateTableRequest{
		TableBucketARN: oss.Ptr(arn),
		Namespace:      oss.Ptr(cfg.namespace),
		Name:           oss.Ptr(cfg.table),
		Format:         oss.Ptr("ICEBERG"),
		Metadata:       &tables.TableMetadata{Iceberg: &tables.IcebergMetadata{Schema: guideSchema}},
	})
	if err := r.step("CreateTable", err); err != nil {
		return err
	}
	tableARN, token := str(table.TableARN), str(table.VersionToken)
	if err := check("CreateTable", strings.HasPrefix(tableARN, arn+"/table/") && token != "",
		"table ARN %q (bucket %q), version token %q", tableARN, arn, token); err != nil {
		return err
	}

	// aws s3tables put-table-maintenance-configuration --type icebergCompaction …
	_, err = c.PutTableMaintenanceConfiguration(ctx, &tables.PutTableMaintenanceConfigurationRequest{
		TableBucketARN: oss.Ptr(arn),
		Namespace:      oss.Ptr(cfg.namespace),
		Name:           oss.Ptr(cfg.table),
		Type:           oss.Ptr("icebergCompaction"),
		Value: &tables.TableMaintenanceValue{
			Status: oss.Ptr("enabled"),
			Settings: &tables.TableMaintenanceSettings{IcebergCompaction: &tables.IcebergCompactionSettingsDetail{
				TargetFileSizeMB: oss.Ptr(guideTargetFileSizeMB),
			}},
		},
	})
	if err := r.step("PutTableMaintenanceConfiguration", err); err != nil {
		return err
	}

	// GetTable both ways: by bucket ARN + namespace + name, and by table ARN.
	got, err := c.GetTable(ctx, &tables.GetTableRequest{
		TableBucketARN: oss.Ptr(arn), Namespace: oss.Ptr(cfg.namespace), Name: oss.Ptr(cfg.table),
	})
	if err := r.step("GetTable", err); err != nil {
		return err
	}
	r.out.Table = &tableSummary{
		Name: str(got.Name), Namespace: got.Namespace, TableARN: str(got.TableARN), Format: str(got.Format),
		Type: str(got.Type), VersionToken: str(got.VersionToken), WarehouseLocation: str(got.WarehouseLocation),
		MetadataLocation: str(got.MetadataLocation), OwnerAccountID: str(got.OwnerAccountId),
		CreatedAt: str(got.CreatedAt),
	}
	t := r.out.Table
	if err := check("GetTable", t.Name == cfg.table && reflect.DeepEqual(t.Namespace, []string{cfg.namespace}) &&
		t.TableARN == tableARN && t.Format == "ICEBERG" && t.VersionToken == token &&
		strings.HasSuffix(t.MetadataLocation, ".metadata.json") && t.WarehouseLocation != "",
		"got %+v (created %q, token %q)", *t, tableARN, token); err != nil {
		return err
	}
	if cfg.accountID != "" {
		if err := check("GetTable", t.OwnerAccountID == cfg.accountID, "ownerAccountId %q", t.OwnerAccountID); err != nil {
			return err
		}
	}
	byARN, err := c.GetTable(ctx, &tables.GetTableRequest{TableARN: oss.Ptr(tableARN)})
	if err := r.step("GetTableByARN", err); err != nil {
		return err
	}
	if err := check("GetTableByARN", str(byARN.TableARN) == tableARN && str(byARN.Name) == cfg.table &&
		str(byARN.VersionToken) == token, "got %q %q %q", str(byARN.TableARN), str(byARN.Name),
		str(byARN.VersionToken)); err != nil {
		return err
	}

	list, err := c.ListTables(ctx, &tables.ListTablesRequest{TableBucketARN: oss.Ptr(arn), Namespace: oss.Ptr(cfg.namespace)})
	if err := r.step("ListTables", err); err != nil {
		return err
	}
	r.out.ListTables = []string{}
	for _, s := range list.Tables {
		r.out.ListTables = append(r.out.ListTables, str(s.Name))
		if err := check("ListTables", str(s.TableARN) == tableARN && reflect.DeepEqual(s.Namespace, []string{cfg.namespace}),
			"listed %q in %v, want %q", str(s.TableARN), s.Namespace, tableARN); err != nil {
			return err
		}
	}
	if err := check("ListTables", reflect.DeepEqual(r.out.ListTables, []string{cfg.table}) && list.ContinuationToken == nil,
		"listed %v (token %v), want [%s]", r.out.ListTables, list.ContinuationToken, cfg.table); err != nil {
		return err
	}

	return r.maintenance(arn, tableARN)
}

func (r *run) maintenance(arn, tableARN string) error {
	ctx, c, cfg := r.ctx, r.client, r.cfg

	bm, err := c.GetTableBucketMaintenanceConfiguration(ctx, &tables.GetTableBucketMaintenanceConfigurationRequest{
		TableBucketARN: oss.Ptr(arn),
	})
	if err := r.step("GetTableBucketMaintenanceConfiguration", err); err != nil {
		return err
	}
	r.out.BucketMaintenance = bm.Configuration
	var removal *tables.SettingsDetail
	if bm.Configuration != nil && bm.Configuration.IcebergUnreferencedFileRemoval != nil &&
		bm.Configuration.IcebergUnreferencedFileRemoval.Settings != nil {
		removal = bm.Configuration.IcebergUnreferencedFileRemoval.Settings.IcebergUnreferencedFileRemoval
	}
	if err := check("GetTableBucketMaintenanceConfiguration", removal != nil &&
		str(bm.Configuration.IcebergUnreferencedFileRemoval.Status) == "enabled" &&
		intp(removal.UnreferencedDays) == guideUnreferencedDays && intp(removal.NonCurrentDays) == guideNonCurrentDays,
		"got %s", jsonText(bm.Configuration)); err != nil {
		return err
	}

	tm, err := c.GetTableMaintenanceConfiguration(ctx, &tables.GetTableMaintenanceConfigurationRequest{
		TableBucketARN: oss.Ptr(arn), Namespace: oss.Ptr(cfg.namespace), Name: oss.Ptr(cfg.table),
	})
	if err := r.step("GetTableMaintenanceConfiguration", err); err != nil {
		return err
	}
	r.out.TableMaintenance = tm.Configuration
	var compaction *tables.IcebergCompactionSettingsDetail
	if tm.Configuration != nil && tm.Configuration.IcebergCompaction != nil && tm.Configuration.IcebergCompaction.Settings != nil {
		compaction = tm.Configuration.IcebergCompaction.Settings.IcebergCompaction
	}
	if err := check("GetTableMaintenanceConfiguration", compaction != nil && str(tm.TableARN) == tableARN &&
		str(tm.Configuration.IcebergCompaction.Status) == "enabled" &&
		intp(compaction.TargetFileSizeMB) == guideTargetFileSizeMB,
		"got %s for %q", jsonText(tm.Configuration), str(tm.TableARN)); err != nil {
		return err
	}

	// aws s3tables get-table-maintenance-job-status …
	js, err := c.GetTableMaintenanceJobStatus(ctx, &tables.GetTableMaintenanceJobStatusRequest{
		TableBucketARN: oss.Ptr(arn), Namespace: oss.Ptr(cfg.namespace), Name: oss.Ptr(cfg.table),
	})
	if err := r.step("GetTableMaintenanceJobStatus", err); err != nil {
		return err
	}
	r.out.JobStatus = js.JobStatus
	return check("GetTableMaintenanceJobStatus", js.JobStatus != nil && js.JobStatus.IcebergCompaction != nil &&
		str(js.JobStatus.IcebergCompaction.Status) != "" && str(js.TableARN) == tableARN,
		"got %s for %q", jsonText(js.JobStatus), str(js.TableARN))
}

func (r *run) cleanup() error {
	ctx, c, cfg, arn := r.ctx, r.client, r.cfg, r.out.TableBucketARN
	_, err := c.DeleteTable(ctx, &tables.DeleteTableRequest{
		TableBucketARN: oss.Ptr(arn), Namespace: oss.Ptr(cfg.namespace), Name: oss.Ptr(cfg.table),
	})
	if err := r.step("DeleteTable", err); err != nil {
		return err
	}
	_, err = c.DeleteNamespace(ctx, &tables.DeleteNamespaceRequest{TableBucketARN: oss.Ptr(arn), Namespace: oss.Ptr(cfg.namespace)})
	if err := r.step("DeleteNamespace", err); err != nil {
		return err
	}
	_, err = c.DeleteTableBucket(ctx, &tables.DeleteTableBucketRequest{TableBucketARN: oss.Ptr(arn)})
	if err := r.step("DeleteTableBucket", err); err != nil {
		return err
	}
	r.out.Deleted = true
	// The bucket must be gone, and the SDK must read the server's error as a service error.
	_, err = c.GetTableBucket(ctx, &tables.GetTableBucketRequest{TableBucketARN: oss.Ptr(arn)})
	sf := asServiceFailure(err)
	r.out.AfterDelete = sf
	if err := check("GetTableBucketAfterDelete", sf != nil && sf.Status == http.StatusNotFound && sf.Code != "",
		"want a 404 service error, got %v", err); err != nil {
		return err
	}
	r.out.Steps = append(r.out.Steps, "GetTableBucketAfterDelete")
	return nil
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}

// addressing names the style the requests really used: a request on a `<bucket>-<account>.` host is virtual-hosted.
func addressing(exchanges []exchange, arn string) string {
	// acs:osstables:<region>:<account>:bucket/<name>
	parts := strings.Split(arn, ":")
	if len(parts) != 5 || !strings.HasPrefix(parts[4], "bucket/") {
		return "unknown"
	}
	prefix := strings.TrimPrefix(parts[4], "bucket/") + "-" + parts[3] + "."
	style := "path"
	for _, ex := range exchanges {
		if strings.HasPrefix(ex.Host, prefix) {
			style = "virtual-hosted"
		}
	}
	return style
}

func main() {
	cfg := parseFlags()
	if cfg.endpoint == "" || cfg.region == "" {
		fmt.Fprintln(os.Stderr, "go-tables: -endpoint and -region are required (or TABLES_ENDPOINT, TABLES_REGION)")
		os.Exit(2)
	}
	if os.Getenv("OSS_ACCESS_KEY_ID") == "" || os.Getenv("OSS_ACCESS_KEY_SECRET") == "" {
		fmt.Fprintln(os.Stderr, "go-tables: set OSS_ACCESS_KEY_ID and OSS_ACCESS_KEY_SECRET")
		os.Exit(2)
	}
	if u, err := url.Parse(cfg.endpoint); err != nil || u.Scheme == "" || u.Host == "" {
		fmt.Fprintf(os.Stderr, "go-tables: -endpoint %q is not an absolute URL\n", cfg.endpoint)
		os.Exit(2)
	}

	rec := newRecorder(cfg.dial)
	ossCfg := oss.LoadDefaultConfig().
		WithCredentialsProvider(credentials.NewEnvironmentVariableCredentialsProvider()).
		WithRegion(cfg.region).
		WithEndpoint(cfg.endpoint).
		WithUsePathStyle(cfg.pathStyle).
		// One attempt: a server error must show as one, not be retried away.
		WithRetryMaxAttempts(1)
	ossCfg.HttpClient = rec
	if cfg.additionalHeaders != "" {
		ossCfg.AdditionalHeaders = strings.Split(cfg.additionalHeaders, ",")
	}

	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	r := &run{cfg: cfg, ctx: ctx, client: tables.NewTablesClient(ossCfg), out: summary{
		SDKVersion: oss.Version(), Endpoint: cfg.endpoint, Region: cfg.region, Steps: []string{},
		ListTables: []string{},
	}}

	err := r.guide()
	if err == nil && cfg.cleanup {
		err = r.cleanup()
	}
	r.out.Requests = rec.exchanges
	r.out.Addressing = addressing(rec.exchanges, r.out.TableBucketARN)
	r.out.OK = err == nil
	if err != nil {
		f := &failure{Message: err.Error(), Service: asServiceFailure(err)}
		var se *stepError
		if errors.As(err, &se) {
			f.Step = se.step
		}
		r.out.Error = f
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if werr := enc.Encode(r.out); werr != nil {
		fmt.Fprintln(os.Stderr, "go-tables: writing the summary:", werr)
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-tables:", err)
		os.Exit(1)
	}
}
