package dev.tablebay.jvmcheck;

import java.net.URI;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * Writes and reads table files through Tablebay's S3 data plane with the AWS SDK for Java v2 at its
 * DEFAULT settings: no {@code -Daws.requestChecksumCalculation=when_required}, no
 * {@code -Daws.responseChecksumValidation=when_required} (the workaround OSS Tables needs), path-style
 * addressing. Prints one line per step, then {@code N passed, M failed}; exits 1 if any step failed.
 *
 * <p>Settings (environment): {@code TABLEBAY_S3_ENDPOINT} (http://127.0.0.1:PORT), {@code TABLEBAY_S3_BUCKET}
 * (a table's {@code <uuid>--table-s3}), {@code TABLEBAY_S3_ACCESS_KEY_ID}, {@code TABLEBAY_S3_SECRET_ACCESS_KEY},
 * {@code TABLEBAY_S3_REGION} (default us-east-1), {@code TABLEBAY_S3_MULTIPART_MIB} (default 24).
 */
public final class Main {
    private static final int MIB = 1024 * 1024;
    private static final int PART_SIZE = 8 * MIB;

    private static int passed;
    private static int failed;

    /** One step of the check; returns a detail for the PASS line or throws. */
    @FunctionalInterface
    interface Step {
        String run() throws Exception;
    }

    /** Records what the SDK put on the wire for each operation (after signing). */
    static final class WireRecorder implements ExecutionInterceptor {
        final Map<String, Map<String, String>> lastByOperation = new ConcurrentHashMap<>();

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            String op = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
            SdkHttpRequest request = context.httpRequest();
            Map<String, String> seen = new TreeMap<>();
            for (String name : List.of("x-amz-content-sha256", "Content-Encoding", "x-amz-trailer",
                    "x-amz-sdk-checksum-algorithm", "x-amz-decoded-content-length", "Content-MD5",
                    "x-amz-checksum-crc32", "x-amz-checksum-mode", "Transfer-Encoding")) {
                request.firstMatchingHeader(name).ifPresent(v -> seen.put(name.toLowerCase(), v));
            }
            if (op != null) {
                lastByOperation.put(op, seen);
            }
        }

        String describe(String operation) {
            Map<String, String> seen = lastByOperation.get(operation);
            return seen == null ? operation + " not seen" : operation + " sent " + seen;
        }
    }

    public static void main(String[] args) {
        String endpoint = require("TABLEBAY_S3_ENDPOINT");
        String bucket = require("TABLEBAY_S3_BUCKET");
        String accessKey = require("TABLEBAY_S3_ACCESS_KEY_ID");
        String secretKey = require("TABLEBAY_S3_SECRET_ACCESS_KEY");
        String region = envOr("TABLEBAY_S3_REGION", "us-east-1");
        int multipartMib = Integer.parseInt(envOr("TABLEBAY_S3_MULTIPART_MIB", "24"));
        String prefix = "jvm-check/" + Long.toHexString(System.nanoTime()) + "/";

        System.out.println("AWS SDK for Java v2 " + software.amazon.awssdk.core.util.VersionInfo.SDK_VERSION
                + ", Java " + System.getProperty("java.version") + ", endpoint " + endpoint + ", bucket " + bucket);

        WireRecorder recorder = new WireRecorder();
        StaticCredentialsProvider credentials =
                StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey));
        // Only what any S3-compatible endpoint needs: endpoint, region, keys, path-style. No checksum settings.
        S3Client s3 = S3Client.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.of(region))
                .credentialsProvider(credentials)
                .forcePathStyle(true)
                .overrideConfiguration(o -> o.addExecutionInterceptor(recorder)
                        .retryStrategy(AwsRetryStrategy.doNotRetry()))
                .build();
        S3AsyncClient s3Async = S3AsyncClient.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.of(region))
                .credentialsProvider(credentials)
                .forcePathStyle(true)
                .multipartEnabled(true)
                .overrideConfiguration(o -> o.addExecutionInterceptor(recorder)
                        .retryStrategy(AwsRetryStrategy.doNotRetry()))
                .build();

        Random random = new Random(20251130L);
        byte[] small = randomBytes(random, 1024 + 17);
        byte[] large = randomBytes(random, multipartMib * MIB + 12345);
        String smallKey = prefix + "small.bin";
        String mpuKey = prefix + "data/part-00000.parquet";
        String asyncKey = prefix + "data/part-00001.parquet";
        String[] smallCrc = new String[1];

        step("no JVM checksum workaround is set", () -> {
            for (String p : List.of("aws.requestChecksumCalculation", "aws.responseChecksumValidation")) {
                check(System.getProperty(p) == null, "system property " + p + " is set");
            }
            for (String e : List.of("AWS_REQUEST_CHECKSUM_CALCULATION", "AWS_RESPONSE_CHECKSUM_VALIDATION")) {
                check(System.getenv(e) == null, "environment variable " + e + " is set");
            }
            return "defaults: WHEN_SUPPORTED / WHEN_SUPPORTED";
        });

        step("PutObject " + small.length + " B (sync client)", () -> {
            PutObjectResponse r = s3.putObject(b -> b.bucket(bucket).key(smallKey), RequestBody.fromBytes(small));
            check(r.eTag() != null && r.eTag().equals("\"" + hex(md5(small)) + "\""), "ETag " + r.eTag());
            smallCrc[0] = r.checksumCRC32();
            return recorder.describe("PutObject") + "; ETag " + r.eTag() + ", CRC32 " + r.checksumCRC32();
        });

        step("GetObject small: same bytes", () -> {
            ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket(bucket).key(smallKey));
            check(Arrays.equals(got.asByteArray(), small), "bytes differ");
            return recorder.describe("GetObject") + "; CRC32 " + got.response().checksumCRC32();
        });

        step("HeadObject small with checksum mode: CRC32 stored", () -> {
            HeadObjectResponse h = s3.headObject(b -> b.bucket(bucket).key(smallKey).checksumMode(ChecksumMode.ENABLED));
            check(h.contentLength() == small.length, "Content-Length " + h.contentLength());
            check(h.checksumCRC32() != null, "no x-amz-checksum-crc32 on HEAD");
            if (smallCrc[0] != null) {
                check(h.checksumCRC32().equals(smallCrc[0]), "CRC32 " + h.checksumCRC32() + " != " + smallCrc[0]);
            }
            return "CRC32 " + h.checksumCRC32();
        });

        int parts = (large.length + PART_SIZE - 1) / PART_SIZE;
        step("multipart " + large.length + " B in " + parts + " parts, uploaded last-first (sync client)", () -> {
            CreateMultipartUploadResponse created = s3.createMultipartUpload(b -> b.bucket(bucket).key(mpuKey));
            String uploadId = created.uploadId();
            List<CompletedPart> done = new ArrayList<>();
            List<Integer> order = new ArrayList<>();
            for (int n = 1; n <= parts; n++) {
                order.add(n);
            }
            Collections.reverse(order);
            for (int n : order) {
                int from = (n - 1) * PART_SIZE;
                int to = Math.min(large.length, from + PART_SIZE);
                byte[] part = Arrays.copyOfRange(large, from, to);
                UploadPartResponse up = s3.uploadPart(b -> b.bucket(bucket).key(mpuKey).uploadId(uploadId).partNumber(n),
                        RequestBody.fromBytes(part));
                check(("\"" + hex(md5(part)) + "\"").equals(up.eTag()), "part " + n + " ETag " + up.eTag());
                done.add(CompletedPart.builder().partNumber(n).eTag(up.eTag()).checksumCRC32(up.checksumCRC32()).build());
            }
            done.sort((a, c) -> Integer.compare(a.partNumber(), c.partNumber()));
            String etag = s3.completeMultipartUpload(b -> b.bucket(bucket).key(mpuKey).uploadId(uploadId)
                    .multipartUpload(m -> m.parts(done))).eTag();
            check(etag != null && etag.endsWith("-" + parts + "\""), "ETag " + etag + " is not \"<md5>-" + parts + "\"");
            return recorder.describe("UploadPart") + "; ETag " + etag;
        });

        step("GetObject multipart: same bytes", () -> {
            ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket(bucket).key(mpuKey));
            check(got.asByteArray().length == large.length, "length " + got.asByteArray().length);
            check(MessageDigest.isEqual(sha256(got.asByteArray()), sha256(large)), "bytes differ");
            return "sha256 " + hex(sha256(large)).substring(0, 16) + "…";
        });

        step("ranged GET across the part 1/2 boundary", () -> {
            int from = PART_SIZE - 100;
            int to = PART_SIZE + 99;
            ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket(bucket).key(mpuKey)
                    .range("bytes=" + from + "-" + to));
            check(Arrays.equals(got.asByteArray(), Arrays.copyOfRange(large, from, to + 1)), "range bytes differ");
            return "Content-Range " + got.response().contentRange();
        });

        step("S3AsyncClient multipart upload (multipartEnabled) and download", () -> {
            s3Async.putObject(b -> b.bucket(bucket).key(asyncKey), AsyncRequestBody.fromBytes(large)).join();
            ResponseBytes<GetObjectResponse> got = s3Async.getObject(b -> b.bucket(bucket).key(asyncKey),
                    AsyncResponseTransformer.toBytes()).join();
            check(MessageDigest.isEqual(sha256(got.asByteArray()), sha256(large)), "bytes differ");
            return recorder.describe("UploadPart") + "; ETag " + got.response().eTag();
        });

        step("ListObjectsV2 sees the three objects", () -> {
            ListObjectsV2Response list = s3.listObjectsV2(b -> b.bucket(bucket).prefix(prefix));
            Map<String, Long> sizes = new TreeMap<>();
            for (S3Object o : list.contents()) {
                sizes.put(o.key(), o.size());
            }
            check(sizes.equals(Map.of(smallKey, (long) small.length, mpuKey, (long) large.length,
                    asyncKey, (long) large.length)), "listing " + sizes);
            return sizes.size() + " keys";
        });

        step("DeleteObjects, then HeadObject is 404", () -> {
            DeleteObjectsResponse deleted = s3.deleteObjects(b -> b.bucket(bucket).delete(Delete.builder()
                    .objects(ObjectIdentifier.builder().key(smallKey).build(),
                            ObjectIdentifier.builder().key(mpuKey).build(),
                            ObjectIdentifier.builder().key(asyncKey).build()).build()));
            check(deleted.errors().isEmpty(), "errors " + deleted.errors());
            check(deleted.deleted().size() == 3, "deleted " + deleted.deleted());
            try {
                s3.headObject(b -> b.bucket(bucket).key(mpuKey));
                throw new AssertionError("HeadObject after delete succeeded");
            } catch (S3Exception e) {
                check(e.statusCode() == 404, "status " + e.statusCode());
            }
            return recorder.describe("DeleteObjects");
        });

        s3.close();
        s3Async.close();
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }

    private static void step(String name, Step step) {
        try {
            String detail = step.run();
            passed++;
            System.out.println("PASS " + name + (detail == null ? "" : " — " + detail));
        } catch (Throwable t) {
            failed++;
            Throwable cause = t.getCause() != null && t instanceof java.util.concurrent.CompletionException ? t.getCause() : t;
            System.out.println("FAIL " + name + ": " + cause);
        }
        System.out.flush();
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new AssertionError(message);
        }
    }

    private static String require(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            System.err.println("missing environment variable " + name);
            System.exit(2);
        }
        return v;
    }

    private static String envOr(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? fallback : v;
    }

    private static byte[] randomBytes(Random random, int size) {
        byte[] b = new byte[size];
        random.nextBytes(b);
        return b;
    }

    private static byte[] md5(byte[] data) throws Exception {
        return MessageDigest.getInstance("MD5").digest(data);
    }

    private static byte[] sha256(byte[] data) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(data);
    }

    private static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (byte b : bytes) {
            sb.append(String.format("%02x", b));
        }
        return sb.toString();
    }
}
