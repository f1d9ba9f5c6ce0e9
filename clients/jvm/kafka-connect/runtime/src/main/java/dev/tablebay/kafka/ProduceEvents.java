package dev.tablebay.kafka;

import java.time.Instant;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Produces JSON events for the Kafka Connect scenario and waits until the broker has acknowledged all of them.
 *
 * <pre>
 * java -cp 'lib/kafka/*' dev.tablebay.kafka.ProduceEvents BOOTSTRAP TOPIC ID_PREFIX FIRST COUNT [EXTRA_FIELD]
 * </pre>
 *
 * Event i (FIRST &lt;= i &lt; FIRST+COUNT) has key "ID_PREFIX-i" (a JSON string) and value
 * {"event_id": "ID_PREFIX-i", "event_time": "&lt;ISO instant&gt;", "event_type": "click|view|buy"}; with
 * EXTRA_FIELD, also {"EXTRA_FIELD": "v-i"} (a field the table does not have yet: schema evolution).
 * Idempotent producer with acks=all, so a retry never writes an event twice.
 */
public final class ProduceEvents {
    private static final String[] TYPES = {"click", "view", "buy"};

    private ProduceEvents() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 5 || args.length > 6) {
            System.err.println("usage: ProduceEvents BOOTSTRAP TOPIC ID_PREFIX FIRST COUNT [EXTRA_FIELD]");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        String prefix = args[2];
        long first = Long.parseLong(args[3]);
        long count = Long.parseLong(args[4]);
        String extra = args.length == 6 ? args[5] : null;

        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());

        long base = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (long i = first; i < first + count; i++) {
                String id = prefix + "-" + i;
                StringBuilder value = new StringBuilder(128)
                        .append("{\"event_id\":\"").append(id)
                        .append("\",\"event_time\":\"").append(Instant.ofEpochMilli(base + i * 1000))
                        .append("\",\"event_type\":\"").append(TYPES[(int) (i % TYPES.length)]).append('"');
                if (extra != null) {
                    value.append(",\"").append(extra).append("\":\"v-").append(i).append('"');
                }
                value.append('}');
                sent.add(producer.send(new ProducerRecord<>(topic, "\"" + id + "\"", value.toString())));
            }
            producer.flush();
            for (Future<RecordMetadata> f : sent) {
                f.get();
            }
        }
        System.out.println("produced " + count + " events to " + topic);
    }
}
