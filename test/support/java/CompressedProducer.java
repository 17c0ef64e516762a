// Produces records with Kafka's own Java producer, compressed with the codec given, so the tests
// read batches as Java clients in the field write them (snappy in xerial framing, lz4 frames, zstd).
// Run with the Kafka jars on the class path (source launcher, no build step):
//   java -cp '<libs>/*' CompressedProducer.java <bootstrap> <topic> <partition> <codec>
// Reads "key<TAB>value" lines from standard input and sends them as one batch, acknowledged by
// every in-sync replica.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class CompressedProducer {
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", args[0]);
    props.put("compression.type", args[3]);
    props.put("acks", "all");
    props.put("linger.ms", "500");
    props.put("batch.size", String.valueOf(4 * 1024 * 1024));
    props.put("key.serializer", StringSerializer.class.getName());
    props.put("value.serializer", StringSerializer.class.getName());
    int partition = Integer.parseInt(args[2]);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        int tab = line.indexOf('\t');
        producer.send(new ProducerRecord<>(args[1], partition, line.substring(0, tab), line.substring(tab + 1)));
      }
      producer.flush();
    }
  }
}
